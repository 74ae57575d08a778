#include "collect/inventory.h"

#include <unistd.h>

#include <array>
#include <cmath>
#include <utility>

namespace gpuscope::collect {
namespace {

template <typename T>
std::optional<T> Opt(Result<T> r) {
  if (!r.ok()) return std::nullopt;
  return std::move(r).value();
}

template <typename T>
T ValueOr(Result<T> r, T fallback) {
  return r.ok() ? std::move(r).value() : fallback;
}

std::string EnabledText(bool on) { return on ? "Enabled" : "Disabled"; }

std::optional<std::string> ModeText(Result<bool> r) {
  if (!r.ok()) return std::nullopt;
  return EnabledText(*r);
}

std::string Hostname() {
  std::array<char, 256> buffer{};
  if (gethostname(buffer.data(), buffer.size() - 1) != 0) return "";
  return std::string(buffer.data());
}

void DescribePci(const nvml::Device& device, GpuInfo* info) {
  auto pci = device.Pci();
  if (!pci.ok()) return;
  info->pci_bus_id = pci->bus_id;
  info->pci_domain = pci->domain;
  info->pci_bus = pci->bus;
  info->pci_device = pci->device;
  info->pci_device_id = pci->pci_device_id;
  info->pci_sub_system_id = pci->pci_sub_system_id;
}

void DescribeMigMode(const nvml::Device& device, GpuInfo* info) {
  auto mig = device.MigMode();
  if (!mig.ok()) return;
  info->mig_capable = true;
  info->mig_enabled = mig->current;
  info->mig_mode_pending = mig->pending;
}

// A MIG instance: the parent's identity, its own ids, UUID and profile.
GpuInfo DescribeMig(const GpuInfo& parent, uint64_t parent_total_mib, const nvml::Device& mig) {
  GpuInfo info = parent;
  info.gpu_instance_id = mig.gpu_instance_id();
  info.compute_instance_id = mig.compute_instance_id();
  info.mig_uuid = ValueOr(mig.Uuid(), std::string());
  info.nvlink_count = 0;
  if (auto attr = mig.Attributes(); attr.ok()) {
    info.mig_profile =
        MigProfileName(attr->gpu_instance_slice_count, attr->memory_mb, parent_total_mib);
  }
  return info;
}

void AppendMigInstances(const nvml::Device& gpu, const GpuInfo& parent,
                        std::vector<DeviceEntry>* out) {
  auto migs = gpu.MigDevices();
  if (!migs.ok()) return;
  auto memory = gpu.Memory();
  const uint64_t total_mib = memory.ok() ? memory->total_bytes / (1024 * 1024) : 0;
  for (const nvml::Device& mig : *migs) {
    out->push_back(DeviceEntry{DescribeMig(parent, total_mib, mig), mig, Status::Ok()});
  }
}

}  // namespace

SystemInfo ReadSystemInfo(const nvml::Library& library) {
  SystemInfo info;
  info.driver_version = library.driver_version();
  info.nvml_version = library.nvml_version();
  info.cuda_version = library.cuda_driver_version();
  info.hostname = Hostname();
  return info;
}

GpuInfo DescribeGpu(const nvml::Device& device) {
  GpuInfo info;
  info.index = device.index();
  info.name = ValueOr(device.Name(), std::string());
  info.uuid = ValueOr(device.Uuid(), std::string());
  info.serial = ValueOr(device.Serial(), std::string());
  DescribePci(device, &info);
  info.minor_number = ValueOr(device.MinorNumber(), 0u);
  if (auto arch = device.Architecture(); arch.ok()) info.architecture = ArchitectureName(*arch);
  if (auto cc = device.CudaComputeCapability(); cc.ok()) {
    info.compute_capability = std::to_string(cc->major) + "." + std::to_string(cc->minor);
  }
  info.vbios_version = ValueOr(device.VbiosVersion(), std::string());
  if (auto brand = device.Brand(); brand.ok()) info.brand = BrandName(*brand);
  const nvml::InforomInfo inforom = device.Inforom();
  info.inforom_image = inforom.image;
  info.inforom_oem = inforom.oem;
  info.inforom_ecc = inforom.ecc;
  info.inforom_power = inforom.power;
  info.persistence_mode = ModeText(device.PersistenceMode());
  info.display_mode = ModeText(device.DisplayMode());
  info.power_management_mode = ModeText(device.PowerManagementMode());
  if (auto mode = device.ComputeMode(); mode.ok()) info.compute_mode = ComputeModeName(*mode);
  info.nvlink_count = ValueOr(device.NvLinkCount(), 0u);
  info.gpm_supported = ValueOr(device.GpmSupported(), false);
  DescribeMigMode(device, &info);
  return info;
}

Result<std::vector<DeviceEntry>> DiscoverDevices(const nvml::Library& library) {
  auto count = library.DeviceCount();
  if (!count.ok()) return count.status().Context("listing GPUs");
  std::vector<DeviceEntry> out;
  for (unsigned i = 0; i < *count; ++i) {
    auto device = library.DeviceByIndex(i);
    if (!device.ok()) {
      GpuInfo info;
      info.index = i;
      out.push_back(DeviceEntry{info, std::nullopt, device.status()});
      continue;
    }
    GpuInfo info = DescribeGpu(*device);
    out.push_back(DeviceEntry{info, *device, Status::Ok()});
    if (info.mig_enabled) AppendMigInstances(*device, info, &out);
  }
  return out;
}

std::string ArchitectureName(uint32_t architecture) {
  switch (architecture) {
    case 2:
      return "Kepler";
    case 3:
      return "Maxwell";
    case 4:
      return "Pascal";
    case 5:
      return "Volta";
    case 6:
      return "Turing";
    case 7:
      return "Ampere";
    case 8:
      return "Ada Lovelace";
    case 9:
      return "Hopper";
    case 10:
      return "Blackwell";
    default:
      return "Unknown";
  }
}

std::string BrandName(int brand) {
  static constexpr std::array<const char*, 17> kNames = {"Unknown",
                                                         "Quadro",
                                                         "Tesla",
                                                         "NVS",
                                                         "Grid",
                                                         "GeForce",
                                                         "Titan",
                                                         "NVIDIA Virtual Applications",
                                                         "NVIDIA Virtual PC",
                                                         "NVIDIA Virtual Compute Server",
                                                         "NVIDIA RTX Virtual Workstation",
                                                         "NVIDIA Cloud Gaming",
                                                         "Quadro RTX",
                                                         "NVIDIA RTX",
                                                         "NVIDIA",
                                                         "GeForce RTX",
                                                         "Titan RTX"};
  if (brand < 0 || brand >= static_cast<int>(kNames.size())) return "Unknown";
  return kNames[static_cast<std::size_t>(brand)];
}

std::string ComputeModeName(int mode) {
  switch (mode) {
    case 0:
      return "Default";
    case 1:
      return "Exclusive_Thread";
    case 2:
      return "Prohibited";
    case 3:
      return "Exclusive_Process";
    default:
      return "Unknown";
  }
}

std::string MigProfileName(uint32_t slices, uint64_t instance_mib, uint64_t parent_total_mib) {
  double gb = std::ceil(static_cast<double>(instance_mib) / 1024.0);
  if (parent_total_mib > 0) {
    const double board_gb = std::ceil(static_cast<double>(parent_total_mib) / 1024.0);
    const double eighths =
        std::round(8.0 * static_cast<double>(instance_mib) / static_cast<double>(parent_total_mib));
    if (eighths >= 1) gb = std::floor(eighths * board_gb / 8.0 + 0.5);
  }
  return std::to_string(slices) + "g." + std::to_string(static_cast<uint64_t>(gb)) + "gb";
}

}  // namespace gpuscope::collect
