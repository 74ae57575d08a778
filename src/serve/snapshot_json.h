// /api/v1/snapshot: the Snapshot the CLI renders from, as versioned JSON, so
// that `gpuscope --agent URL` (the summary), `query`, `-L` and `top` parse it
// back into the same Snapshot and print, through their unchanged renderers,
// the bytes a local run prints (docs/api.md, docs/cli.md "Remote parity").
//
//   {"version": 1, "agent": {...}, "sequence": ..., "system": {...},
//    "devices": [{"info": {...}, "sample": {"values": {"gpu_util": 97, ...}}}],
//    "attribution": {"holders": {...}, "processes": {...}} | null,
//    "verdicts": ["", ...]}
//
// Values are keyed by the catalog's stable keys (MetricDef::key), present
// values only; a key this build does not know is skipped (a newer agent).
// Process names leave the host only with the agent's --process-names, as in
// /api/v1/gpus; without it each name is "" and agent.process_names is false.
// Attribution is its holders per device and per process; the sources' states
// and errors stay on the agent (/metrics, logs).
//
// The parser takes text from the network: it checks the shape first
// (base::JsonShapeProblem), never lets nlohmann throw or convert, bounds every
// number it stores, and turns control characters into U+FFFD (every text ends
// on a terminal). A malformed body is an InvalidArgument naming the field.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/report.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::serve {

inline constexpr int kSnapshotVersion = 1;

// What the agent says about itself with the snapshot.
struct SnapshotAgent {
  bool simulated = false;
  std::string scenario;        // the simulator's scenario; "" off the simulator
  bool process_names = false;  // names are served (--process-names)
  bool processes_read = true;  // the sampler reads running processes at all
};

struct RemoteSnapshot {
  SnapshotPtr snapshot;  // never null when parsed
  SnapshotAgent agent;
  // Per Snapshot::gpus slot: the diagnosis headline `top` shows (TopVerdicts).
  std::vector<std::string> verdicts;
};

// The line `top` shows under each device: the most confident finding, or
// "(gathering: ...)" while the window is too short; "" for none.
std::vector<std::string> TopVerdicts(std::span<const analysis::GpuDiagnosis> diagnoses,
                                     std::size_t slots, double min_span_seconds);

std::string SnapshotJson(const Snapshot& snapshot, const SnapshotAgent& agent,
                         const std::vector<std::string>& verdicts);

Result<RemoteSnapshot> ParseSnapshotJson(std::string_view text);

}  // namespace gpuscope::serve
