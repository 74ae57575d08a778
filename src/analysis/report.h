// `gpuscope diagnose`: runs Diagnose over every selected GPU of a Snapshot
// with its Window, and renders the verdicts as text (each GPU's findings,
// evidence and recommended action) or JSON.
//
// Thread safety: pure functions; the Window is read through its own lock.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnosis.h"
#include "gpuscope/attribution.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"
#include "gpuscope/window.h"

namespace gpuscope::analysis {

// One application KPI of a GPU, as `gpuscope serve`'s OTLP receiver holds it
// (docs/app-kpis.md): the totals the application sent and, once there is
// enough history, the kpi_regression judgement of its recent mean.
struct KpiSummary {
  std::string kpi;            // "step_duration", "request_duration", ...
  std::string family;         // the Prometheus family it is exported as
  std::string workload;       // "" when not attributed to one
  double count = 0, sum = 0;  // histogram totals (counters: count 0, sum the total)
  std::optional<double> recent_mean, baseline_mean;  // seconds, kpi_regression's spans
  std::optional<double> change;                      // recent / baseline - 1
  bool regressed = false;
  std::string verdict;  // kpi_regression's line; "" without enough history
};

struct GpuDiagnosis {
  std::size_t slot = 0;  // position in Snapshot::gpus (and the Window)
  GpuInfo info;
  double span_seconds = 0;  // window actually covered
  std::size_t points = 0;
  std::vector<Finding> findings;
  // Without findings: what the window shows ("idle for the last 1m10s after
  // 3m50s at 97% utilization", "moderate, steady load: ..."); else empty.
  std::string activity;
  // Set when the window is shorter than the diagnosis needs: how long it must be.
  double needed_seconds = 0;
  std::vector<Holder> holders;  // whose work the GPU serves (Snapshot::attribution)
  // Whether any point had utilization.gpu: the driver has none for a GPU in
  // MIG mode, and the report then says so instead of judging the load.
  bool utilization = true;
  std::vector<ProcessHolding> processes;  // its processes and whose each is
  std::vector<KpiSummary> kpis;           // its application KPIs (serve with OTLP only)
  // Set when the GPU answers GPU_IS_LOST at the window's end: LostSentence,
  // the one finding (no verdict is judged on a GPU that is gone).
  std::string lost;
  // Set by an offline diagnosis of a simulator scenario (cli/sim_clock.h):
  // its times are seconds of the scenario clock, not Unix time, and "since"
  // reads "1m00s into the scenario" (JSON: "clock": "scenario").
  bool scenario_clock = false;
  // A virtual GPU of a VM on the vGPU host board `info`, judged over its own
  // window (Window::InstancePoints); absent for a GPU or a MIG instance.
  std::optional<VgpuInstance> vgpu;
  // On a vGPU host board: the diagnosis of each of its virtual GPUs, nested
  // under the board (one entry per slot stays one entry per device for the
  // consumers that key on the slot: metrics, web cards, ledger).
  std::vector<GpuDiagnosis> vgpus;
};

struct RunOptions {
  DiagnoseOptions diagnose;
  std::vector<std::size_t> slots;  // positions in Snapshot::gpus; empty: all
};

// Diagnoses each selected GPU over its trailing window, and each virtual GPU
// of a vGPU host board over its own (GpuDiagnosis::vgpus). Slots outside the
// snapshot are skipped.
std::vector<GpuDiagnosis> RunDiagnose(const Snapshot& snapshot, const Window& window,
                                      const RunOptions& options);

// Attaches a GPU's application KPIs (serve's OTLP join). A GPU without
// findings whose request_duration KPI counted requests over its recent span
// (KpiSummary::recent_mean: at least the regression's min_count of them) is
// serving: its activity line says so first ("serving: requests answered
// (request_duration of vllm-a: 0.8 s mean lately); idle for the last 20s ...").
void AddKpis(GpuDiagnosis& d, std::vector<KpiSummary> kpis);

// Human-readable report: per GPU a header, its application KPIs (one line
// each, with the kpi_regression verdict when there is one), then each
// finding's verdict, confidence, evidence (value against threshold), signals
// and action; a vGPU host board's virtual GPUs follow it, each the same way.
std::string FormatText(const std::vector<GpuDiagnosis>& results);
// {"gpus": [{"index", "uuid", "name", "window_seconds", "points",
//  "findings": [{"kind", "confidence", "fallback", "verdict", "action",
//  "signals", "evidence": [{"signal", "value", "comparison", "threshold",
//  "unit", "met"}], "oom_eta_seconds"?, "since", "since_seconds", "clock"?}], "activity"?, "lost"?,
//  "kpis"?:
//  [{"kpi", "family", "workload", "count", "sum", "mean"?, "recent_mean"?, "baseline_mean"?,
//  "change"?, "regressed", "verdict"?}], "vgpus"?: [{the same, with "vgpu_id", "vgpu_uuid",
//  "vgpu_type", "vm_id", "vm_name"}]}]}, indented by 2.
std::string FormatJson(const std::vector<GpuDiagnosis>& results);

// "GPU 3 (00000000:5D:00.0) is lost (XID 79: fallen off the bus; NVML answers
// GPU_IS_LOST). Drain the node and reboot it; RMA if it recurs." Every command
// says a lost GPU with this sentence.
std::string LostSentence(const GpuInfo& info, const GpuSample& sample);

// "GPU 0" or "GPU 0 MIG 1g.10gb (GI 7)".
std::string GpuLabel(const GpuInfo& info);
// GpuLabel, or "GPU 0 vGPU 3251634176 H100-20C of VM vm-a" for a virtual GPU.
std::string DiagnosisLabel(const GpuDiagnosis& d);

}  // namespace gpuscope::analysis
