#include "analysis/report.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <nlohmann/json.hpp>

#include "analysis/mig.h"
#include "analysis/rules.h"
#include "analysis/signals.h"
#include "gpuscope/attribution_json.h"

namespace gpuscope::analysis {
namespace {

std::string EvidenceValue(double v, const std::string& unit) {
  if (unit == "ratio") return fmt::format("{:.2f}", v);
  if (unit == "bytes") return fmt::format("{:.1f} GiB", v / (1024.0 * 1024 * 1024));
  if (unit == "bytes/s") return fmt::format("{:.1f} MB/s", v / 1e6);
  if (unit == "s") return fmt::format("{:.0f} s", v);
  if (unit == "count" || unit == "lanes" || unit == "generation") return fmt::format("{:.0f}", v);
  return fmt::format("{:.1f} {}", v, unit);
}

std::string EvidenceLine(const Evidence& e) {
  std::string line = e.signal + " " + EvidenceValue(e.value, e.unit);
  if (!e.comparison.empty()) {
    line += fmt::format(" {} {}", e.comparison, EvidenceValue(e.threshold, e.unit));
  }
  return line;
}

std::string Join(const std::vector<std::string>& items, const char* sep) {
  std::string out;
  for (const std::string& s : items) out += (out.empty() ? "" : sep) + s;
  return out;
}

// "2026-12-06 05:41:10 UTC, 1m20s before the window's end" (on a scenario's
// clock "4m10s into the scenario, ..."), or "... (the window's start: it held
// throughout)".
std::string SinceText(const Finding& f, double span_seconds, bool scenario_clock) {
  std::string at = scenario_clock
                       ? Duration(f.since) + " into the scenario"
                       : fmt::format("{:%Y-%m-%d %H:%M:%S} UTC",
                                     fmt::gmtime(static_cast<std::time_t>(std::floor(f.since))));
  if (f.since_seconds >= span_seconds - 0.5) {
    return at + ", the window's start: it held throughout";
  }
  return fmt::format("{}, {} before the window's end", at, Duration(f.since_seconds));
}

void FormatFinding(const Finding& f, const GpuDiagnosis& d, std::string& out) {
  out += fmt::format("  [{}] confidence {:.2f}{}\n", KindName(f.kind), f.confidence,
                     f.fallback ? " (fallback signals: no GPM)" : "");
  out += "    " + f.verdict + "\n";
  out += "    since: " + SinceText(f, d.span_seconds, d.scenario_clock) + "\n";
  std::vector<std::string> ev;
  for (const Evidence& e : f.evidence) ev.push_back(EvidenceLine(e));
  out += "    evidence: " + Join(ev, "; ") + "\n";
  out += "    signals: " + Join(f.signals, ", ") + "\n";
  out += "    action: " + f.action + "\n";
}

nlohmann::json FindingJson(const Finding& f, bool scenario_clock) {
  nlohmann::json j = {{"kind", KindName(f.kind)},
                      {"confidence", f.confidence},
                      {"fallback", f.fallback},
                      {"verdict", f.verdict},
                      {"action", f.action},
                      {"signals", f.signals},
                      {"evidence", nlohmann::json::array()}};
  for (const Evidence& e : f.evidence) {
    nlohmann::json ej = {
        {"signal", e.signal}, {"value", e.value}, {"unit", e.unit}, {"met", e.met}};
    if (!e.comparison.empty()) ej["comparison"] = e.comparison, ej["threshold"] = e.threshold;
    j["evidence"].push_back(ej);
  }
  if (f.oom_eta_seconds) j["oom_eta_seconds"] = *f.oom_eta_seconds;
  j["since"] = f.since;
  j["since_seconds"] = f.since_seconds;
  if (scenario_clock) j["clock"] = "scenario";  // since: scenario seconds, not Unix time
  return j;
}

// "step_duration of train-a: mean 0.212 s over 1200 observations" (a
// histogram), or the counter's total; the regression verdict follows.
std::string KpiLine(const KpiSummary& k) {
  std::string line = "  kpi " + k.kpi;
  if (!k.workload.empty()) line += " of " + k.workload;
  if (k.count > 0) {
    line += fmt::format(": mean {:.3g} s over {:.0f} observations", k.sum / k.count, k.count);
  } else {
    line += fmt::format(": total {:.0f}", k.sum);
  }
  if (!k.verdict.empty()) line += "\n    " + k.verdict;
  return line + "\n";
}

nlohmann::json KpiJson(const KpiSummary& k) {
  nlohmann::json j = {{"kpi", k.kpi},     {"family", k.family}, {"workload", k.workload},
                      {"count", k.count}, {"sum", k.sum},       {"regressed", k.regressed}};
  if (k.count > 0) j["mean"] = k.sum / k.count;
  if (k.recent_mean) j["recent_mean"] = *k.recent_mean;
  if (k.baseline_mean) j["baseline_mean"] = *k.baseline_mean;
  if (k.change) j["change"] = *k.change;
  if (!k.verdict.empty()) j["verdict"] = k.verdict;
  return j;
}

}  // namespace

namespace {

// Judges `d` over `points` (its whole window) with `latest` as its last sample.
void Judge(GpuDiagnosis& d, std::span<const WindowPoint> points, const GpuSample& latest,
           const DiagnoseOptions& options) {
  std::span<const WindowPoint> used = TrailingPoints(points, options.window_seconds);
  d.points = used.size();
  d.span_seconds = used.empty() ? 0 : used.back().t - used.front().t;
  d.utilization = std::any_of(used.begin(), used.end(),
                              [](const WindowPoint& p) { return p.Has(Metric::kGpuUtil); });
  Judgement judged = JudgeTrailing(d.info, used, latest, options);
  d.findings = std::move(judged.findings);
  if (latest.state == GpuState::kLost) {
    d.findings.clear();
    d.lost = LostSentence(d.info, latest);
  } else if (d.span_seconds < options.min_span_seconds) {
    d.needed_seconds = options.min_span_seconds;
  } else if (d.findings.empty() && d.utilization) {
    d.activity = std::move(judged.activity);
  }
}

// The virtual GPUs of the host board in `board`, each over its own window
// with the board's clocks, temperature and power where it ran (as a MIG
// instance has its parent's), its framebuffer as its memory, its VM as its
// holder.
void AddVgpus(const Snapshot& snapshot, const Window& window, GpuDiagnosis& board,
              std::span<const WindowPoint> board_points, const DiagnoseOptions& options) {
  const GpuSample& sample = snapshot.samples[board.slot];
  if (sample.state == GpuState::kLost) return;
  for (const VgpuInstance& v : sample.vgpus) {
    GpuDiagnosis d;
    d.slot = board.slot;
    d.info = board.info;
    d.vgpu = v;
    std::vector<WindowPoint> points =
        WithParentMetrics(window.InstancePoints(board.slot, v.id), board_points);
    GpuSample latest;
    if (v.fb_used_bytes) latest.Set(Metric::kMemoryUsed, static_cast<double>(*v.fb_used_bytes));
    if (v.fb_total_bytes) latest.Set(Metric::kMemoryTotal, static_cast<double>(*v.fb_total_bytes));
    Judge(d, points, latest, options);
    for (const Holder& h : board.holders) {
      if (h.workload == v.vm()) d.holders.push_back(h);
    }
    board.vgpus.push_back(std::move(d));
  }
}

}  // namespace

std::vector<GpuDiagnosis> RunDiagnose(const Snapshot& snapshot, const Window& window,
                                      const RunOptions& options) {
  std::vector<std::size_t> slots = options.slots;
  if (slots.empty()) {
    for (std::size_t i = 0; i < snapshot.gpus.size(); ++i) slots.push_back(i);
  }
  std::vector<GpuDiagnosis> out;
  for (std::size_t slot : slots) {
    if (slot >= snapshot.gpus.size() || slot >= snapshot.samples.size()) continue;
    GpuDiagnosis d;
    d.slot = slot;
    d.info = snapshot.gpus[slot];
    const std::vector<WindowPoint> own = window.Points(slot);
    std::vector<WindowPoint> points = own;
    // A MIG instance runs at its GPU's clock, temperature and power.
    if (std::optional<std::size_t> parent = ParentSlot(snapshot.gpus, d.info)) {
      points = WithParentMetrics(points, window.Points(*parent));
    }
    Judge(d, points, snapshot.samples[slot], options.diagnose);
    if (snapshot.attribution) {
      d.holders = snapshot.attribution->Of(d.info);
      d.processes = snapshot.attribution->Holdings(snapshot.samples[slot].processes);
    }
    AddVgpus(snapshot, window, d, own, options.diagnose);
    out.push_back(std::move(d));
  }
  return out;
}

void AddKpis(GpuDiagnosis& d, std::vector<KpiSummary> kpis) {
  for (KpiSummary& k : kpis) {
    const bool answered = k.kpi == "request_duration" && k.recent_mean;
    // The utilization line may already say serving (bursts): the KPI only adds to it.
    if (answered && d.findings.empty() && !d.activity.starts_with("serving:")) {
      std::string line =
          fmt::format("serving: requests answered (request_duration{}: {:.3g} s mean lately)",
                      k.workload.empty() ? "" : " of " + k.workload, *k.recent_mean);
      d.activity = d.activity.empty() ? line : line + "; " + d.activity;
    }
    d.kpis.push_back(std::move(k));
  }
}

std::string LostSentence(const GpuInfo& info, const GpuSample& sample) {
  std::string gpu = fmt::format("GPU {}", info.index);
  if (!info.pci_bus_id.empty()) gpu += " (" + info.pci_bus_id + ")";
  // XIDs reach a snapshot through the health event thread; a one-shot read
  // has only NVML's answer, which is what XID 79 leaves behind.
  const bool xid79 = sample.xid_counts.contains(79);
  return gpu +
         (xid79 ? " is lost (XID 79: fallen off the bus; NVML answers GPU_IS_LOST)."
                : " is lost (NVML answers GPU_IS_LOST: fallen off the bus, XID 79 in the kernel "
                  "log).") +
         " Drain the node and reboot it; RMA if it recurs.";
}

std::string GpuLabel(const GpuInfo& info) {
  std::string label = fmt::format("GPU {}", info.index);
  if (info.gpu_instance_id) {
    label += fmt::format(" MIG {} (GI {})", info.mig_profile, *info.gpu_instance_id);
  }
  return label;
}

std::string DiagnosisLabel(const GpuDiagnosis& d) {
  if (!d.vgpu) return GpuLabel(d.info);
  return fmt::format("GPU {} vGPU {} {} of VM {}", d.info.index, d.vgpu->id, d.vgpu->type,
                     d.vgpu->vm());
}

namespace {

std::string NoFindingLine(const GpuDiagnosis& d) {
  if (d.points < 2) return "  not enough points in the window to diagnose\n";
  if (d.needed_seconds > 0) {
    return fmt::format(
        "  no verdict yet: the window covers {:.0f} s of the {:.0f} s the diagnosis "
        "needs\n",
        d.span_seconds, d.needed_seconds);
  }
  if (d.utilization) {
    return "  no bottleneck found" + (d.activity.empty() ? "" : ": " + d.activity) + "\n";
  }
  return d.info.mig_enabled && !d.info.gpu_instance_id
             ? "  no bottleneck found; utilization not available: MIG mode, the driver reports "
               "activity per instance (below)\n"
             : "  no bottleneck found; utilization not available from the driver\n";
}

}  // namespace

namespace {

void FormatOne(const GpuDiagnosis& d, std::string& out) {
  const std::string& uuid = d.vgpu                    ? d.vgpu->uuid
                            : d.info.mig_uuid.empty() ? d.info.uuid
                                                      : d.info.mig_uuid;
  // Points, not samples: older ones are buckets of several samples.
  const std::string identity = d.info.name.empty() && uuid.empty()
                                   ? "(identity unknown: lost before first read)"
                                   : d.info.name + " (" + uuid + ")";
  out += fmt::format("{}: {}  window {:.0f}s, {} point{}\n", DiagnosisLabel(d), identity,
                     d.span_seconds, d.points, d.points == 1 ? "" : "s");
  for (const Holder& h : d.holders) out += fmt::format("  serves {}\n", h.Describe());
  for (const ProcessHolding& p : d.processes) {
    if (!p.holder.workload.empty()) {
      out += fmt::format("  process {} {}: {}\n", p.pid, p.name, p.holder.Describe());
    }
  }
  for (const KpiSummary& k : d.kpis) out += KpiLine(k);
  if (!d.lost.empty()) {
    out += "  GPU lost: " + d.lost + "\n";
  } else if (d.findings.empty()) {
    out += NoFindingLine(d);
  }
  for (const Finding& f : d.findings) FormatFinding(f, d, out);
  for (const GpuDiagnosis& v : d.vgpus) FormatOne(v, out);
}

nlohmann::json DiagnosisJson(const GpuDiagnosis& d) {
  nlohmann::json g = {{"index", d.info.index},   {"uuid", d.info.uuid},
                      {"name", d.info.name},     {"window_seconds", d.span_seconds},
                      {"points", d.points},      {"findings", nlohmann::json::array()},
                      {"holders", d.holders},    {"utilization_available", d.utilization},
                      {"processes", d.processes}};
  if (d.info.gpu_instance_id) {
    g["gpu_instance_id"] = *d.info.gpu_instance_id;
    g["mig_uuid"] = d.info.mig_uuid;
    g["mig_profile"] = d.info.mig_profile;
  }
  if (d.vgpu) {
    g["vgpu_id"] = d.vgpu->id;
    g["vgpu_uuid"] = d.vgpu->uuid;
    g["vgpu_type"] = d.vgpu->type;
    g["vm_id"] = d.vgpu->vm_id;
    g["vm_name"] = d.vgpu->vm_name;
  }
  for (const Finding& f : d.findings) g["findings"].push_back(FindingJson(f, d.scenario_clock));
  if (!d.activity.empty()) g["activity"] = d.activity;
  if (!d.lost.empty()) g["lost"] = d.lost;
  if (!d.kpis.empty()) {
    g["kpis"] = nlohmann::json::array();
    for (const KpiSummary& k : d.kpis) g["kpis"].push_back(KpiJson(k));
  }
  if (!d.vgpus.empty()) {
    g["vgpus"] = nlohmann::json::array();
    for (const GpuDiagnosis& v : d.vgpus) g["vgpus"].push_back(DiagnosisJson(v));
  }
  return g;
}

}  // namespace

std::string FormatText(const std::vector<GpuDiagnosis>& results) {
  std::string out;
  for (const GpuDiagnosis& d : results) FormatOne(d, out);
  return out;
}

std::string FormatJson(const std::vector<GpuDiagnosis>& results) {
  nlohmann::json gpus = nlohmann::json::array();
  for (const GpuDiagnosis& d : results) gpus.push_back(DiagnosisJson(d));
  return nlohmann::json{{"gpus", gpus}}.dump(2) + "\n";
}

}  // namespace gpuscope::analysis
