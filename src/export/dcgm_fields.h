// DCGM field names gpuscope knows beyond the catalog: the string fields a
// counters file may turn into labels, dcgm-exporter's own DCGM_EXP_* names,
// and the real DCGM fields that NVML alone cannot provide (so a counters file
// naming them is valid, but they are skipped with a warning).
//
// Thread safety: immutable tables and pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "gpuscope/snapshot.h"

namespace gpuscope::prom {

// Identity values a `label` field of a counters file can carry.
enum class LabelField : uint8_t {
  kDriverVersion,          // DCGM_FI_DRIVER_VERSION
  kNvmlVersion,            // DCGM_FI_NVML_VERSION
  kBrand,                  // DCGM_FI_DEV_BRAND
  kSerial,                 // DCGM_FI_DEV_SERIAL
  kVbiosVersion,           // DCGM_FI_DEV_VBIOS_VERSION
  kName,                   // DCGM_FI_DEV_NAME
  kUuid,                   // DCGM_FI_DEV_UUID
  kPciBusId,               // DCGM_FI_DEV_PCI_BUSID
  kMinorNumber,            // DCGM_FI_DEV_MINOR_NUMBER
  kInforomImage,           // DCGM_FI_DEV_INFOROM_IMAGE_VER
  kInforomOem,             // DCGM_FI_DEV_OEM_INFOROM_VER
  kInforomEcc,             // DCGM_FI_DEV_ECC_INFOROM_VER
  kInforomPower,           // DCGM_FI_DEV_POWER_INFOROM_VER
  kCudaComputeCapability,  // DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY: major << 32 | minor
};

// The label field a DCGM name stands for, if gpuscope serves it.
std::optional<LabelField> FindLabelField(std::string_view dcgm_name);

// The value of a label field for one GPU (or MIG instance).
std::string LabelFieldValue(LabelField field, const SystemInfo& system, const GpuInfo& gpu);

// dcgm-exporter's own DCGM_EXP_* names (its counters know four).
bool IsExporterField(std::string_view name);

// dcgm-exporter's derived DCGM_EXP_* families that gpuscope modules render
// through the Family API (XID and clock-event counts in a window).
bool IsServedExporterField(std::string_view name);

// The current DCGM name of a legacy one (go-dcgm's `dcgm_gpu_temp` style
// names of dcgm-exporter 1.x), else `name`. The
// family keeps the file's name, as in dcgm-exporter.
std::string_view CanonicalDcgmName(std::string_view name);

// A vGPU instance's DCGM field that the renderer writes on vGPU host boards
// whatever the counters file says (render_vgpu.cc): listing it is no problem.
bool IsRenderedVgpuField(std::string_view name);

// A real DCGM (or DCGM_EXP_*) field name that gpuscope does not serve: vGPU,
// inforom versions, per-link and per-engine profiling fields, ...
bool IsKnownUnsupportedField(std::string_view name);

}  // namespace gpuscope::prom
