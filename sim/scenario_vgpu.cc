// The scenario's vGPU keys: `vgpu` (the board hosts virtual GPUs for VMs) and
// `vgpu_guest` (the GPU is a VM's virtual GPU, with a licence). Schema in
// sim/README.md.
#include <cstdlib>

#include "scenario.h"
#include "yaml_fields.h"

namespace gpuscope::sim {
namespace {

constexpr double kGiB = 1073741824.0;

// The framebuffer of a vGPU type named "<board>-<N><series>" ("H100-20C": 20 GiB).
bool TypeFramebuffer(const std::string& type, unsigned long long* bytes) {
  const size_t dash = type.rfind('-');
  if (dash == std::string::npos || dash + 2 > type.size()) return false;
  char* end = nullptr;
  const unsigned long gib = std::strtoul(type.c_str() + dash + 1, &end, 10);
  if (end == type.c_str() + dash + 1 || gib == 0 || gib > 1024) return false;
  if (*end < 'A' || *end > 'Z' || end[1] != '\0') return false;
  *bytes = static_cast<unsigned long long>(gib * kGiB);
  return true;
}

Status Instance(const std::string& src, const YAML::Node& node, VgpuInstanceSpec* v) {
  FieldReader r(src, node, "vgpu instance");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  GPUSCOPE_RETURN_IF_ERROR(r.String("type", &v->type));
  if (!TypeFramebuffer(v->type, &v->fb_bytes)) {
    return r.Error(r.Has("type") ? r.Get("type") : node,
                   "vgpu instance.type must look like H100-20C (board, dash, framebuffer GiB, "
                   "series letter), got '" +
                       v->type + "'");
  }
  GPUSCOPE_RETURN_IF_ERROR(r.String("vm_id", &v->vm_id));
  if (v->vm_id.empty() || v->vm_id.size() >= 80) {
    return r.Error(node, "vgpu instance needs a vm_id (1 to 79 characters)");
  }
  GPUSCOPE_RETURN_IF_ERROR(r.Double("util", &v->util, 0, 1));
  GPUSCOPE_RETURN_IF_ERROR(r.Double("memory_used_gib", &v->memory_used_gib, 0, 1024));
  if (v->memory_used_gib * kGiB > static_cast<double>(v->fb_bytes)) {
    return r.Error(r.Get("memory_used_gib"), "vgpu instance.memory_used_gib exceeds its type");
  }
  GPUSCOPE_RETURN_IF_ERROR(r.Double("license_expires_at", &v->license_expires_at, 0, 1e9));
  GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("pid", &v->pid, 1, 4194304));
  v->process_name = "python3";
  GPUSCOPE_RETURN_IF_ERROR(r.String("process_name", &v->process_name));
  if (v->process_name.size() >= 64) return r.Error(node, "process_name: at most 63 characters");
  return r.Finish();
}

Status Host(const std::string& src, const YAML::Node& node, GpuSpec* gpu) {
  FieldReader r(src, node, "vgpu");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  VgpuHostSpec host;
  std::string scheduler = "best_effort";
  GPUSCOPE_RETURN_IF_ERROR(r.String("scheduler", &scheduler));
  if (scheduler == "best_effort") {
    host.scheduler = VgpuScheduler::kBestEffort;
  } else if (scheduler == "equal_share") {
    host.scheduler = VgpuScheduler::kEqualShare;
  } else if (scheduler == "fixed_share") {
    host.scheduler = VgpuScheduler::kFixedShare;
  } else {
    return r.Error(
        r.Get("scheduler"),
        "vgpu.scheduler: best_effort, equal_share or fixed_share, got '" + scheduler + "'");
  }
  GPUSCOPE_RETURN_IF_ERROR(r.Unsigned("timeslice_us", &host.timeslice_us, 100, 1000000));
  GPUSCOPE_RETURN_IF_ERROR(r.Bool("sriov", &host.sriov));
  YAML::Node list = r.Get("instances");
  GPUSCOPE_RETURN_IF_ERROR(r.Finish());
  if (list.IsDefined() && !list.IsNull()) {
    if (!list.IsSequence()) return r.Error(list, "vgpu.instances must be a list");
    unsigned long long fb = 0;
    for (const YAML::Node& n : list) {
      host.instances.emplace_back();
      GPUSCOPE_RETURN_IF_ERROR(Instance(src, n, &host.instances.back()));
      fb += host.instances.back().fb_bytes;
    }
    if (host.instances.size() > 32) return r.Error(list, "at most 32 vGPU instances per GPU");
    if (fb > gpu->preset->memory_total_mib * 1048576ULL) {
      return r.Error(list, "the vGPU instances' framebuffers exceed the board's memory");
    }
  }
  gpu->vgpu_host = std::move(host);
  return Status::Ok();
}

Status Guest(const std::string& src, const YAML::Node& node, GpuSpec* gpu) {
  FieldReader r(src, node, "vgpu_guest");
  GPUSCOPE_RETURN_IF_ERROR(r.CheckIsMap());
  VgpuGuestSpec guest;
  GPUSCOPE_RETURN_IF_ERROR(r.Double("license_expires_at", &guest.license_expires_at, 0, 1e9));
  GPUSCOPE_RETURN_IF_ERROR(r.Finish());
  gpu->vgpu_guest = guest;
  return Status::Ok();
}

bool Given(const YAML::Node& n) { return n.IsDefined() && !n.IsNull(); }

}  // namespace

Status ParseVgpuKeys(const std::string& source, const YAML::Node& host, const YAML::Node& guest,
                     GpuSpec* gpu) {
  if (Given(host) && Given(guest)) {
    return YamlError(source, guest, "a GPU is either a vGPU host (vgpu) or a guest (vgpu_guest)");
  }
  if (Given(host) && gpu->mig_enabled) {
    return YamlError(source, host, "vgpu instances on a MIG-enabled GPU are not simulated");
  }
  if (Given(host)) return Host(source, host, gpu);
  if (Given(guest)) return Guest(source, guest, gpu);
  return Status::Ok();
}

}  // namespace gpuscope::sim
