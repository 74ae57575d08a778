// Exported entry point: nvmlDeviceGetFieldValues (batched reads, a return
// code per entry).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "exports_common.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope
// Field ids by name from nvml/field_ids.h (through nvml/abi.h), the table the
// catalog rows name them from: a catalog row and its simulator line agree.
using enum gpuscope::nvml::FieldId;
using gpuscope::nvml::kFiClocksEventMinDriver;

namespace {

enum ValueType { kDouble = 0, kUint = 1, kUlonglong = 3, kSint = 5 };

void SetU64(nvmlFieldValue_t& f, double v) {
  f.valueType = kUlonglong;
  f.value.ullVal = static_cast<unsigned long long>(std::max(0.0, v));
}

void SetU32(nvmlFieldValue_t& f, double v) {
  f.valueType = kUint;
  f.value.uiVal = static_cast<unsigned>(std::max(0.0, v));
}

// Sums a per-link counter over the link in scopeId, or all links.
template <typename Get>
bool LinkSum(const DeviceCall& c, const nvmlFieldValue_t& f, Get get, double* out) {
  unsigned links = c.preset().nvlink_links;
  if (links == 0) return false;
  *out = 0;
  for (unsigned l = 0; l < links; ++l) {
    if (f.scopeId != 0xFFFFFFFFu && f.scopeId != l) continue;
    *out += get(l);
  }
  return f.scopeId == 0xFFFFFFFFu || f.scopeId < links;
}

bool EccField(const DeviceCall& c, nvmlFieldValue_t& f) {
  if (!c.preset().ecc && f.fieldId <= kFiEccDbeAggTotal) {
    return f.fieldId <= kFiEccPending ? (SetU32(f, 0), true) : false;
  }
  const GpuState& s = c.st;
  switch (f.fieldId) {
    case kFiEccCurrent:
    case kFiEccPending:
      SetU32(f, c.preset().ecc ? 1 : 0);
      return true;
    case kFiEccSbeVolTotal:
      SetU64(f, s.ecc_sbe_vol);
      return true;
    case kFiEccDbeVolTotal:
      SetU64(f, s.ecc_dbe_vol);
      return true;
    case kFiEccSbeAggTotal:
      SetU64(f, s.ecc_sbe_agg);
      return true;
    case kFiEccDbeAggTotal:
      SetU64(f, s.ecc_dbe_agg);
      return true;
  }
  bool retire = !c.preset().remaps_rows && c.preset().ecc;
  bool remap = c.preset().remaps_rows && c.preset().ecc && !c.spec().mig_enabled;
  switch (f.fieldId) {
    case kFiRetiredSbe:
      if (retire) SetU64(f, s.retired_sbe);
      return retire;
    case kFiRetiredDbe:
      if (retire) SetU64(f, s.retired_dbe);
      return retire;
    case kFiRetiredPending:
      if (retire) SetU64(f, s.retired_pending);
      return retire;
    case kFiRemappedCor:
      if (remap) SetU32(f, s.remap_corr);
      return remap;
    case kFiRemappedUnc:
      if (remap) SetU32(f, s.remap_unc);
      return remap;
    case kFiRemappedPending:
      if (remap) SetU32(f, s.remap_pending);
      return remap;
    case kFiRemappedFailure:
      if (remap) SetU32(f, s.remap_failure);
      return remap;
  }
  return false;
}

bool NvLinkField(const DeviceCall& c, nvmlFieldValue_t& f) {
  const GpuState& s = c.st;
  double v = 0;
  bool ok = false;
  switch (f.fieldId) {
    case kFiNvLinkCrcFlitErrorTotal:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.link_errors[l].crc_flit; }, &v);
      break;
    case kFiNvLinkCrcDataErrorTotal:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.link_errors[l].crc_data; }, &v);
      break;
    case kFiNvLinkReplayErrorTotal:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.link_errors[l].replay; }, &v);
      break;
    case kFiNvLinkRecoveryErrorTotal:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.link_errors[l].recovery; }, &v);
      break;
    case kFiNvLinkThroughputDataTx:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.nvlink_tx_kib[l]; }, &v);
      break;
    case kFiNvLinkThroughputDataRx:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.nvlink_rx_kib[l]; }, &v);
      break;
    // Raw counts add the protocol overhead (about 1/8 on top of data).
    case kFiNvLinkThroughputRawTx:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.nvlink_tx_kib[l] * 1.125; }, &v);
      break;
    case kFiNvLinkThroughputRawRx:
      ok = LinkSum(
          c, f, [&](unsigned l) { return s.nvlink_rx_kib[l] * 1.125; }, &v);
      break;
    case kFiNvLinkLinkCount:
      if (c.preset().nvlink_links == 0) return false;
      SetU32(f, c.preset().nvlink_links);
      return true;
    default:
      return false;
  }
  if (ok) SetU64(f, v);
  return ok;
}

bool DeviceField(const DeviceCall& c, nvmlFieldValue_t& f) {
  const GpuState& s = c.st;
  if (f.fieldId >= kFiPerfPolicyPower && f.fieldId <= kFiPerfPolicyReliability) {
    SetU64(f, s.violation_ns[f.fieldId - kFiPerfPolicyPower]);
    return true;
  }
  // R560+ per-reason counters (NVML_FI_DEV_CLOCKS_EVENT_REASON_*): thermal
  // slowdown sets the SW and HW reasons together here, so both read the
  // thermal time; the power brake is the board-limit time.
  if (f.fieldId >= kFiClocksEventSwThermal && f.fieldId <= kFiClocksEventHwPowerBrake) {
    if (std::atoi(c.sim->scenario().driver_version.c_str()) <
        static_cast<int>(kFiClocksEventMinDriver))
      return false;
    SetU64(f, s.violation_ns[f.fieldId == kFiClocksEventHwPowerBrake ? kViolBoard : kViolThermal]);
    return true;
  }
  switch (f.fieldId) {
    case kFiMemoryTemp:
      if (c.preset().temp_mem_max == 0) return false;
      SetU32(f, std::lround(s.mem_temp_c));
      return true;
    case kFiTotalEnergyConsumption:
      SetU64(f, s.energy_mj);
      return true;
    case kFiPcieReplayCounter:
      SetU32(f, s.pcie_replays);
      return true;
    case kFiPowerAverage:
      SetU32(f, std::lround(s.PowerAverageW() * 1000));
      return true;
    case kFiPowerInstant:
      SetU32(f, std::lround(s.power_w * 1000));
      return true;
    case kFiGpuRecoveryAction:
      if (!(c.sim->SupportedEvents(c.gpu) & 0x8000)) return false;  // R570+
      SetU32(f, c.sim->RecoveryAction(c.gpu, c.now));
      return true;
  }
  return EccField(c, f) || NvLinkField(c, f);
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count,
                                                 nvmlFieldValue_t* values) {
  SIM_DEVICE_CALL(nvmlDeviceGetFieldValues, d);
  if (count <= 0 || !values) return rc::kInvalidArgument;
  long long ts = static_cast<long long>(c.TimestampUs());
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& f = values[i];
    f.timestamp = ts;
    f.latencyUsec = 0;
    f.value.ullVal = 0;
    f.nvmlReturn = DeviceField(c, f) ? rc::kSuccess : rc::kNotSupported;
  }
  return rc::kSuccess;
}
