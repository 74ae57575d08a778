// The JSON API of the web page (docs/api.md), built from what the exporter
// already holds: the published snapshot (with its attribution), the health
// report of the same cycle, the diagnosis monitor's latest verdicts and the
// sampler's trailing window. Nothing here samples NVML; a request only reads
// and formats, so the API costs nothing while nobody asks.
//
//   /api/v1/gpus       inventory and current values of every GPU and MIG
//                      instance, with health verdict and current bottleneck
//   /api/v1/window     the trailing window of one device (gpu=N[&gi=G]) or of
//                      all (gpu=all), for the metrics asked (metrics=a,b,...),
//                      optionally only points after `since`
//   /api/v1/health     `gpuscope health --json` of the last cycle
//   /api/v1/diagnosis  `gpuscope diagnose --json` (format=text: as it prints)
//
// Parameters are checked strictly: an unknown parameter, a malformed or
// unknown value is an error whose message the endpoint answers with 400.
//
// Thread safety: pure functions of their arguments (the Window is read
// through its own lock).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "analysis/report.h"
#include "gpuscope/catalog.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "gpuscope/window.h"
#include "health/checks.h"
#include "http/server.h"

namespace gpuscope::web {

// About the agent, for the page's header.
struct AgentInfo {
  std::string version;
  std::string source;   // "simulator (scenario mixed-node)" or the library path
  std::string metrics;  // "both", "dcgm", "native"
  double interval_seconds = 1;
  double window_seconds = 600;
  // --process-names: process names may leave the host. Without it the health
  // and diagnosis answers keep each process's pid and holder, not its name.
  bool process_names = false;
  std::string scenario;          // the simulator's scenario; "" off the simulator
  bool processes_read = true;    // the sampler reads running processes
  double min_span_seconds = 30;  // the diagnosis's shortest window (top's "gathering")
};

// One application KPI of one device: the totals of a histogram (count and sum
// since the sender started; counters have count 0) that the application sent
// over OTLP, attributed to the device's slot, with the kpi_regression
// judgement when there is one. The page turns successive totals into
// per-interval means (step time, request latency); /api/v1/diagnosis lists
// them under their device.
struct KpiReading {
  std::size_t slot = 0;  // position in Snapshot::gpus
  analysis::KpiSummary summary;
};

// What one request reads: one cycle's published state.
// One request's view of a published cycle; the spans point into data the
// caller keeps alive for the request (serve's Cycle).
struct View {
  SnapshotPtr snapshot;                                // never null
  std::shared_ptr<const health::HealthReport> health;  // null before the first cycle
  std::span<const analysis::GpuDiagnosis> diagnoses;   // may be empty (too early)
  std::span<const KpiReading> kpis;                    // empty without an OTLP receiver
};

// /api/v1/gpus (see docs/api.md for the fields).
std::string GpusJson(const View& view, const AgentInfo& agent);

// A parsed /api/v1/window query.
struct WindowQuery {
  std::vector<std::size_t> slots;  // positions in Snapshot::gpus (and the Window)
  bool all = false;                // gpu=all: answer {"devices": [...]}
  std::vector<Metric> metrics;     // in the order asked, without repeats
  double since = 0;                // only points with t > since
};

// Checks a /api/v1/window query against the snapshot's devices; the error
// message is the 400 body ("gpu: no GPU 12 on this node (0-7)").
Result<WindowQuery> ParseWindowQuery(const http::Request& request, const Snapshot& snapshot);
std::string WindowJson(const Window& window, const Snapshot& snapshot, const WindowQuery& query,
                       const AgentInfo& agent);

// /api/v1/diagnosis: gpu=N[&gi=G] narrows to one device; format=json (default)
// or text. Answers the body, or the 400 message as the error.
Result<std::string> DiagnosisBody(const http::Request& request, const View& view, bool* is_text);
// /api/v1/health: id=IDS narrows the report to the GPUs of `gpuscope health
// -i IDS` (a MIG UUID: its GPU) and judges the node over them.
Result<std::string> HealthBody(const http::Request& request, const View& view);

}  // namespace gpuscope::web
