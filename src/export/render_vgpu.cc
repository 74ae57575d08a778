// The Renderer's per-vGPU families: on a vGPU host board, one series per
// virtual GPU (a VM's), in instance-id order. A board hosts a bounded number
// of instances (its framebuffer divided by the smallest type), so the series
// are bounded by the hardware, not by what the guests do.
#include <algorithm>
#include <optional>
#include <string>

#include "export/render_internal.h"

namespace gpuscope::prom {
namespace {

// The value of vGPU family `f` (kVgpuBuiltins order) for one instance.
std::optional<double> VgpuValue(std::size_t f, const VgpuInstance& v) {
  auto bytes = [](const std::optional<uint64_t>& b) {
    return b ? std::optional<double>(static_cast<double>(*b)) : std::nullopt;
  };
  switch (f) {
    case 0:
      return v.sm_utilization;
    case 1:
      return v.memory_utilization;
    case 2:
      return v.encoder_utilization;
    case 3:
      return v.decoder_utilization;
    case 4:
      return bytes(v.fb_used_bytes);
    case 5:
      return bytes(v.fb_total_bytes);
    default:
      return v.license_state ? std::optional<double>(*v.license_state) : std::nullopt;
  }
}

std::vector<const VgpuInstance*> ById(const GpuSample& sample) {
  std::vector<const VgpuInstance*> out;
  for (const VgpuInstance& v : sample.vgpus) out.push_back(&v);
  std::sort(out.begin(), out.end(),
            [](const VgpuInstance* a, const VgpuInstance* b) { return a->id < b->id; });
  return out;
}

void AppendInstanceLabels(const VgpuInstance& v, std::string_view id_label, std::string& out) {
  AppendLabel(id_label, std::to_string(v.id), false, &out);
  if (!v.uuid.empty()) AppendLabel("vgpu_uuid", v.uuid, false, &out);
  if (!v.type.empty()) AppendLabel("vgpu_type", v.type, false, &out);
  AppendLabel("vm_id", v.vm_id, false, &out);
  if (!v.vm_name.empty()) AppendLabel("vm_name", v.vm_name, false, &out);
}

}  // namespace

void Renderer::RenderVgpus(const Snapshot& snapshot, Writer& writer) {
  const bool holder_labels = options_.attribution_labels == AttributionLabels::kSeries;
  for (std::size_t f = 0; f < kVgpuBuiltins.size(); ++f) {
    const PlannedFamily& family = plan_->vgpus[f];
    writer.Begin(family);
    std::string& out = writer.out();
    for (uint32_t slot : cache_->order) {
      if (slot >= snapshot.samples.size()) continue;
      const GpuSample& sample = snapshot.samples[slot];
      if (sample.state == GpuState::kLost || sample.vgpus.empty()) continue;
      for (const VgpuInstance* v : ById(sample)) {
        const std::optional<double> value = VgpuValue(f, *v);
        if (!value) continue;
        out.append(family.name);
        out.append(cache_->device[slot]);
        AppendInstanceLabels(*v, "vgpu", out);
        if (holder_labels) AppendLabel("workload", v->vm(), false, &out);
        out.append("} ");
        f >= 4 ? AppendInteger(*value, &out) : AppendValue(*value, &out);
        out.push_back('\n');
      }
    }
    writer.End();
  }
}

// dcgm-exporter's name for a vGPU's framebuffer use, in MiB as DCGM gives it.
void Renderer::RenderVgpusDcgm(const Snapshot& snapshot, Writer& writer) {
  const PlannedFamily& family = plan_->vgpu_memory_usage;
  writer.Begin(family);
  std::string& out = writer.out();
  for (uint32_t slot : cache_->order) {
    if (slot >= snapshot.samples.size()) continue;
    const GpuSample& sample = snapshot.samples[slot];
    if (sample.state == GpuState::kLost || sample.vgpus.empty()) continue;
    for (const VgpuInstance* v : ById(sample)) {
      if (!v->fb_used_bytes) continue;
      out.append(family.name);
      out.append(cache_->dcgm_device[slot]);
      AppendInstanceLabels(*v, "vgpu_id", out);
      out.append("} ");
      AppendInteger(static_cast<double>(*v->fb_used_bytes / 1048576), &out);
      out.push_back('\n');
    }
  }
  writer.End();
}

}  // namespace gpuscope::prom
