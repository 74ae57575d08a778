// `gpuscope diagnose`: runs Diagnose over every selected GPU of a Snapshot
// with its Window, and renders the verdicts as text (each GPU's findings,
// evidence and recommended action) or JSON.
//
// Thread safety: pure functions; the Window is read through its own lock.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnosis.h"
#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "gpuscope/window.h"

namespace gpuscope::analysis {

struct GpuDiagnosis {
  std::size_t slot = 0;  // position in Snapshot::gpus (and the Window)
  GpuInfo info;
  double span_seconds = 0;  // window actually covered
  std::size_t points = 0;
  std::vector<Finding> findings;
  // Without findings: what the window shows ("idle for the last 1m10s after
  // 3m50s at 97% utilization", "moderate, steady load: ..."); else empty.
  std::string activity;
  std::vector<Holder> holders;  // whose work the GPU serves (Snapshot::attribution)
  // Whether any point had utilization.gpu: the driver has none for a GPU in
  // MIG mode, and the report then says so instead of judging the load.
  bool utilization = true;
  std::vector<ProcessHolding> processes;  // its processes and whose each is
};

struct RunOptions {
  DiagnoseOptions diagnose;
  std::vector<std::size_t> slots;  // positions in Snapshot::gpus; empty: all
};

// Diagnoses each selected GPU over its trailing window. Slots outside the
// snapshot are skipped.
std::vector<GpuDiagnosis> RunDiagnose(const Snapshot& snapshot, const Window& window,
                                      const RunOptions& options);

// Human-readable report: per GPU a header, then each finding's verdict,
// confidence, evidence (value against threshold), signals and action.
std::string FormatText(const std::vector<GpuDiagnosis>& results);
// {"gpus": [{"index", "uuid", "name", "window_seconds", "points",
//  "findings": [{"kind", "confidence", "fallback", "verdict", "action",
//  "signals", "evidence": [{"signal", "value", "comparison", "threshold",
//  "unit", "met"}], "oom_eta_seconds"?}], "activity"?}]}, indented by 2.
std::string FormatJson(const std::vector<GpuDiagnosis>& results);

// "GPU 0" or "GPU 0 MIG 1g.10gb (GI 7)".
std::string GpuLabel(const GpuInfo& info);

}  // namespace gpuscope::analysis
