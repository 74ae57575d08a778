// Per-GPU label prefixes of the Renderer, built once per inventory.
#include <algorithm>
#include <numeric>
#include <tuple>

#include "export/render_internal.h"

namespace gpuscope::prom {
namespace {

bool SameIdentity(const GpuInfo& a, const GpuInfo& b) {
  return a.index == b.index && a.minor_number == b.minor_number && a.uuid == b.uuid &&
         a.name == b.name && a.pci_bus_id == b.pci_bus_id && a.serial == b.serial &&
         a.vbios_version == b.vbios_version && a.brand == b.brand &&
         a.inforom_image == b.inforom_image && a.inforom_oem == b.inforom_oem &&
         a.inforom_ecc == b.inforom_ecc && a.inforom_power == b.inforom_power &&
         a.architecture == b.architecture && a.compute_capability == b.compute_capability &&
         a.gpu_instance_id == b.gpu_instance_id && a.compute_instance_id == b.compute_instance_id &&
         a.mig_uuid == b.mig_uuid && a.mig_profile == b.mig_profile;
}

std::string Number(unsigned value) { return std::to_string(value); }

std::string DcgmPrefix(const SystemInfo& system, const GpuInfo& gpu, const RenderOptions& options,
                       const std::vector<const CounterEntry*>& label_fields) {
  std::string s = "{";
  AppendLabel("gpu", Number(gpu.index), true, &s);
  AppendLabel("UUID", gpu.uuid, false, &s);
  AppendLabel("pci_bus_id", gpu.pci_bus_id, false, &s);
  // dcgm-exporter writes "nvidia" + DCGM's GPU id (the NVML index), not the minor number.
  AppendLabel("device", "nvidia" + Number(gpu.index), false, &s);
  AppendLabel("modelName", gpu.name, false, &s);
  if (gpu.gpu_instance_id) {
    AppendLabel("GPU_I_PROFILE", gpu.mig_profile, false, &s);
    AppendLabel("GPU_I_ID", Number(*gpu.gpu_instance_id), false, &s);
  }
  if (!options.no_hostname && !system.hostname.empty()) {
    AppendLabel(options.hostname_label, system.hostname, false, &s);
  }
  // A value NVML could not give is left out, as dcgm-exporter skips blank ones.
  for (const CounterEntry* entry : label_fields) {
    const std::string value = LabelFieldValue(entry->label_field, system, gpu);
    if (!value.empty()) AppendLabel(entry->name, value, false, &s);
  }
  return s;
}

// Appends the labels whose value is known, in the order given.
void AppendKnown(std::initializer_list<std::pair<std::string_view, const std::string*>> labels,
                 std::string* s) {
  for (const auto& [name, value] : labels) {
    if (!value->empty()) AppendLabel(name, *value, false, s);
  }
}

// dcgm-exporter's names and order.
std::string DcgmHolderLabels(const Holder& h) {
  std::string s;
  AppendKnown({{"container", &h.container},
               {"namespace", &h.namespace_name},
               {"pod", &h.pod},
               {"hpc_job", &h.hpc_job}},
              &s);
  return s;
}

}  // namespace

std::string NativeHolderLabels(const Holder& h) {
  std::string s;
  AppendKnown({{"namespace", &h.namespace_name},
               {"pod", &h.pod},
               {"container", &h.container},
               {"hpc_job", &h.hpc_job},
               {"workload", &h.workload}},
              &s);
  return s;
}

namespace {

// One prefix per holder (the plain prefix when there is none).
std::vector<std::string> PerHolder(const std::string& plain, const std::vector<Holder>& holders,
                                   std::string (*labels)(const Holder&)) {
  if (holders.empty()) return {plain};
  std::vector<std::string> out;
  out.reserve(holders.size());
  for (const Holder& h : holders) {
    // Holders that differ only in labels this format lacks (a VM's workload,
    // or a process name's, has no DCGM label) make one series, not copies.
    std::string prefix = plain + labels(h);
    if (std::find(out.begin(), out.end(), prefix) == out.end()) out.push_back(std::move(prefix));
  }
  return out;
}

std::string NativePrefix(const GpuInfo& gpu) {
  std::string s = "{";
  AppendLabel("gpu", Number(gpu.index), true, &s);
  AppendLabel("uuid", gpu.mig_uuid.empty() ? gpu.uuid : gpu.mig_uuid, false, &s);
  if (gpu.gpu_instance_id) {
    AppendLabel("gpu_instance", Number(*gpu.gpu_instance_id), false, &s);
    AppendLabel("mig_profile", gpu.mig_profile, false, &s);
  }
  if (gpu.compute_instance_id) {
    AppendLabel("compute_instance", Number(*gpu.compute_instance_id), false, &s);
  }
  return s;
}

std::string InfoLine(const SystemInfo& system, const GpuInfo& gpu, const std::string& prefix,
                     const RenderOptions& options) {
  std::string s(kGpuInfo.name);
  s += prefix;
  AppendLabel("name", gpu.name, false, &s);
  AppendLabel("pci_bus_id", gpu.pci_bus_id, false, &s);
  AppendLabel("minor_number", Number(gpu.minor_number), false, &s);
  AppendLabel("brand", gpu.brand, false, &s);
  AppendLabel("serial", gpu.serial, false, &s);
  AppendLabel("vbios_version", gpu.vbios_version, false, &s);
  AppendLabel("architecture", gpu.architecture, false, &s);
  AppendLabel("compute_capability", gpu.compute_capability, false, &s);
  AppendLabel("driver_version", system.driver_version, false, &s);
  AppendLabel("cuda_version", system.cuda_version, false, &s);
  if (!options.no_hostname && !system.hostname.empty()) {
    AppendLabel("hostname", system.hostname, false, &s);
  }
  s += "} 1\n";
  return s;
}

// Whole GPUs first, then their MIG instances by instance ids.
auto SortKey(const GpuInfo& gpu) {
  return std::make_tuple(gpu.index, gpu.gpu_instance_id ? int64_t{*gpu.gpu_instance_id} : -1,
                         gpu.compute_instance_id ? int64_t{*gpu.compute_instance_id} : -1);
}

}  // namespace

bool Renderer::Cache::Matches(const Snapshot& snapshot,
                              const AttributionPtr& current_attribution) const {
  if (!valid || gpus.size() != snapshot.gpus.size()) return false;
  if (attribution != current_attribution) return false;
  const SystemInfo& s = snapshot.system;
  if (s.driver_version != system.driver_version || s.nvml_version != system.nvml_version ||
      s.cuda_version != system.cuda_version || s.hostname != system.hostname) {
    return false;
  }
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    if (!SameIdentity(gpus[i], snapshot.gpus[i])) return false;
  }
  return true;
}

void Renderer::Cache::Rebuild(const Snapshot& snapshot, const AttributionPtr& current_attribution,
                              const RenderOptions& options, const Plan& plan) {
  system = snapshot.system;
  gpus = snapshot.gpus;
  attribution = current_attribution;
  static const Attribution kNobody;
  const Attribution& holders = attribution ? *attribution : kNobody;
  std::size_t n = gpus.size();
  dcgm.resize(n);
  dcgm_device.resize(n);
  native.resize(n);
  device.resize(n);
  info.resize(n);
  holder_lines.assign(n, {});
  static const std::vector<Holder> kNone;
  const bool info_mode = options.attribution_labels == AttributionLabels::kInfo;
  for (std::size_t i = 0; i < n; ++i) {
    const std::vector<Holder>& held = holders.Of(gpus[i]);
    const std::vector<Holder>& of = info_mode ? kNone : held;
    dcgm_device[i] = DcgmPrefix(system, gpus[i], options, plan.label_fields);
    dcgm[i] = PerHolder(dcgm_device[i], of, DcgmHolderLabels);
    device[i] = NativePrefix(gpus[i]);
    native[i] = PerHolder(device[i], of, NativeHolderLabels);
    info[i].clear();
    for (const std::string& prefix : native[i])
      info[i] += InfoLine(system, gpus[i], prefix, options);
    if (!info_mode) continue;
    for (const Holder& h : held) {
      holder_lines[i] += kGpuHolderInfo.name;
      holder_lines[i] += device[i] + NativeHolderLabels(h) + "} 1\n";
    }
  }
  order.resize(n);
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [this](uint32_t a, uint32_t b) { return SortKey(gpus[a]) < SortKey(gpus[b]); });
  rank.resize(n);
  for (std::size_t i = 0; i < n; ++i) rank[order[i]] = static_cast<uint32_t>(i);
  valid = true;
}

PlannedFamily PlanFamily(std::string_view name, std::string_view help, FamilyType type) {
  PlannedFamily family;
  family.name = std::string(name);
  family.type = type;
  AppendHeader(name, help, type, Format::kText, &family.header[0]);
  AppendHeader(name, help, type, Format::kOpenMetrics, &family.header[1]);
  return family;
}

}  // namespace gpuscope::prom
