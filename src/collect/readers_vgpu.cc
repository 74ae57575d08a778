// The slow-tier reader of a vGPU host board's virtual GPUs: one entry per
// active instance with its VM, type, framebuffer, licence and the share of
// the board the vGPU scheduler gave it since the last read.
#include <algorithm>

#include "collect/readers.h"

namespace gpuscope::collect {

namespace {

// The mean of each instance's samples, in [0, 1].
void ApplyUtilization(const std::vector<nvml::VgpuUtilizationSample>& samples, VgpuInstance& v) {
  double sm = 0, memory = 0, encoder = 0, decoder = 0;
  unsigned n = 0;
  for (const nvml::VgpuUtilizationSample& s : samples) {
    if (s.id != v.id) continue;
    sm += s.sm_percent, memory += s.memory_percent;
    encoder += s.encoder_percent, decoder += s.decoder_percent;
    ++n;
  }
  if (n == 0) return;
  auto ratio = [n](double sum) { return std::clamp(sum / n / 100.0, 0.0, 1.0); };
  v.sm_utilization = ratio(sm);
  v.memory_utilization = ratio(memory);
  v.encoder_utilization = ratio(encoder);
  v.decoder_utilization = ratio(decoder);
}

}  // namespace

void ReadVgpus(ReadContext& ctx, VgpuState& state) {
  if (!ctx.Has(Metric::kVirtualizationMode) ||
      ctx.reading().sample.Get(Metric::kVirtualizationMode) != nvml::kVirtualizationHostOfVgpus) {
    return;
  }
  const nvml::Device& d = ctx.device();
  auto ids =
      ctx.Try<std::vector<uint32_t>>("nvmlDeviceGetActiveVgpus", [&] { return d.ActiveVgpus(); });
  if (!ids) return;
  std::vector<VgpuInstance> out;
  for (uint32_t id : *ids) {
    auto info = ctx.Try<nvml::VgpuInstanceInfo>("nvmlVgpuInstanceGetVmID",
                                                [&] { return d.VgpuInstance(id); });
    if (ctx.lost()) return;
    if (!info) continue;  // the VM stopped between the two calls
    VgpuInstance v;
    v.id = id;
    v.uuid = info->uuid;
    v.vm_id = info->vm_id;
    v.type = info->type_name;
    v.fb_total_bytes = info->fb_total_bytes;
    v.fb_used_bytes = info->fb_used_bytes;
    v.license_state = info->license_state;
    out.push_back(std::move(v));
  }
  if (auto samples = ctx.Try<std::vector<nvml::VgpuUtilizationSample>>(
          "nvmlDeviceGetVgpuUtilization", [&] { return d.VgpuUtilization(state.last_seen_us); })) {
    for (VgpuInstance& v : out) ApplyUtilization(*samples, v);
    for (const nvml::VgpuUtilizationSample& s : *samples) {
      state.last_seen_us = std::max<uint64_t>(state.last_seen_us, s.timestamp_us);
    }
  }
  ctx.reading().sample.vgpus = std::move(out);
}

}  // namespace gpuscope::collect
