// The Renderer's per-process families: on each device the processes using the
// most memory, one series each, and the rest summed into pid="other", so a
// node with hundreds of processes still has a bounded number of series. And
// the processes joined to their holders: each holder's share of its GPU.
#include <algorithm>
#include <optional>
#include <string>

#include "export/render_internal.h"
#include "gpuscope/holder_share.h"

namespace gpuscope::prom {
namespace {

std::string_view KindName(uint8_t kinds) {
  if ((kinds & kMpsProcess) != 0) return "mps";
  const bool compute = (kinds & kComputeProcess) != 0;
  const bool graphics = (kinds & kGraphicsProcess) != 0;
  if (compute && graphics) return "compute+graphics";
  return graphics ? "graphics" : "compute";
}

// The value of process family `f` (kProcessBuiltins order) for one process.
std::optional<double> ProcessValue(std::size_t f, const ProcessInfo& p) {
  switch (f) {
    case 0:
      if (!p.used_memory_bytes) return std::nullopt;
      return static_cast<double>(*p.used_memory_bytes);
    case 1:
      return p.sm_utilization;
    default:
      return p.memory_utilization;
  }
}

// The processes a device runs itself, most memory first (then most SM time,
// then pid). A MIG-enabled GPU also lists its instances' processes: those are
// rendered on their instance only, so sums by GPU count each once.
void Rank(const GpuInfo& gpu, const GpuSample& sample, std::vector<const ProcessInfo*>& out) {
  out.clear();
  for (const ProcessInfo& p : sample.processes) {
    if (!gpu.is_mig() && p.gpu_instance_id) continue;
    out.push_back(&p);
  }
  std::sort(out.begin(), out.end(), [](const ProcessInfo* a, const ProcessInfo* b) {
    const uint64_t ma = a->used_memory_bytes.value_or(0), mb = b->used_memory_bytes.value_or(0);
    if (ma != mb) return ma > mb;
    const double sa = a->sm_utilization.value_or(0), sb = b->sm_utilization.value_or(0);
    if (sa != sb) return sa > sb;
    return a->pid < b->pid;
  });
}

void AppendProcessValue(std::size_t f, double value, std::string& out) {
  out.append("} ");
  f == 0 ? AppendInteger(value, &out) : AppendValue(value, &out);
  out.push_back('\n');
}

}  // namespace

void Renderer::RenderProcesses(const Snapshot& snapshot, Writer& writer) {
  const Attribution* attribution = snapshot.attribution.get();
  std::vector<const ProcessInfo*> ranked;
  for (std::size_t f = 0; f < kProcessBuiltins.size(); ++f) {
    const PlannedFamily& family = plan_->processes[f];
    writer.Begin(family);
    std::string& out = writer.out();
    for (uint32_t slot : cache_->order) {
      if (slot >= snapshot.samples.size()) continue;
      const GpuSample& sample = snapshot.samples[slot];
      if (sample.state == GpuState::kLost) continue;
      Rank(snapshot.gpus[slot], sample, ranked);
      const std::size_t top = std::min<std::size_t>(ranked.size(), options_.process_series);
      // Shown in pid order: stable output whatever the memory ranking does.
      std::sort(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(top),
                [](const ProcessInfo* a, const ProcessInfo* b) { return a->pid < b->pid; });
      for (std::size_t i = 0; i < top; ++i) {
        const ProcessInfo& p = *ranked[i];
        const std::optional<double> value = ProcessValue(f, p);
        if (!value) continue;
        out.append(family.name);
        out.append(cache_->device[slot]);
        if (const Holder* h = attribution ? attribution->OfProcess(p.pid) : nullptr) {
          out.append(NativeHolderLabels(*h));
        }
        AppendLabel("pid", std::to_string(p.pid), false, &out);
        AppendLabel("type", KindName(p.kinds), false, &out);
        if (options_.process_names && !p.name.empty()) {
          AppendLabel("process_name", p.name, false, &out);
        }
        AppendProcessValue(f, *value, out);
      }
      std::optional<double> rest;
      for (std::size_t i = top; i < ranked.size(); ++i) {
        if (const std::optional<double> value = ProcessValue(f, *ranked[i])) {
          rest = rest.value_or(0) + *value;
        }
      }
      if (!rest) continue;
      out.append(family.name);
      out.append(cache_->device[slot]);
      AppendLabel("pid", "other", false, &out);
      AppendProcessValue(f, *rest, out);
    }
    writer.End();
  }
}

// One series per holder of each whole GPU whose per-process samples were
// measured, holder labels in both modes: bounded by the holders, like
// gpuscope_gpu_holder_info. Processes of no holder, when they ran, get one
// series more without holder labels (the reports split their use evenly).
void Renderer::RenderHolderShares(const Snapshot& snapshot, Writer& writer) {
  if (!snapshot.attribution) return;
  const PlannedFamily& family = plan_->holder_share;
  writer.Begin(family);
  std::string& out = writer.out();
  for (uint32_t slot : cache_->order) {
    if (slot >= snapshot.samples.size() || slot >= snapshot.gpus.size()) continue;
    const GpuSample& sample = snapshot.samples[slot];
    if (sample.state == GpuState::kLost) continue;
    const GpuInfo& gpu = snapshot.gpus[slot];
    double unheld = 0;
    const auto shares = HolderSmShares(*snapshot.attribution, gpu, sample, &unheld);
    if (!shares) continue;
    if (unheld > 0) {
      out.append(family.name);
      out.append(cache_->device[slot]);
      out.append("} ");
      AppendValue(unheld, &out);
      out.push_back('\n');
    }
    const std::vector<Holder>& holders = snapshot.attribution->Of(gpu);
    for (std::size_t i = 0; i < holders.size(); ++i) {
      out.append(family.name);
      out.append(cache_->device[slot]);
      out.append(NativeHolderLabels(holders[i]));
      out.append("} ");
      AppendValue((*shares)[i], &out);
      out.push_back('\n');
    }
  }
  writer.End();
}

}  // namespace gpuscope::prom
