// Exported entry points: ECC, page retirement, row remapping, NVLink health.
#include "exports_common.h"
#include "workload.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

nvmlReturn_t EccCount(const DeviceCall& c, int error_type, int counter_type,
                      unsigned long long* count) {
  if (!count || error_type < 0 || error_type > 1 || counter_type < 0 || counter_type > 1) {
    return rc::kInvalidArgument;
  }
  if (!c.preset().ecc) return rc::kNotSupported;
  const GpuState& s = c.st;
  if (error_type == 0) {
    *count = counter_type == 0 ? s.ecc_sbe_vol : s.ecc_sbe_agg;
  } else {
    *count = counter_type == 0 ? s.ecc_dbe_vol : s.ecc_dbe_agg;
  }
  return rc::kSuccess;
}

}  // namespace

SIM_EXPORT nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int error_type,
                                                    int counter_type, unsigned long long* count) {
  SIM_DEVICE_CALL(nvmlDeviceGetTotalEccErrors, d);
  return EccCount(c, error_type, counter_type, count);
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetMemoryErrorCounter(nvmlDevice_t d, int error_type,
                                                        int counter_type, int location,
                                                        unsigned long long* count) {
  SIM_DEVICE_CALL(nvmlDeviceGetMemoryErrorCounter, d);
  if (location < 0 || location > 7) return rc::kInvalidArgument;
  if (location >= 4 && location <= 6) return rc::kNotSupported;  // texture, CBU
  nvmlReturn_t r = EccCount(c, error_type, counter_type, count);
  if (r == rc::kSuccess && location != 2) *count = 0;  // every error lands in DRAM
  return r;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int* current, int* pending) {
  SIM_DEVICE_CALL(nvmlDeviceGetEccMode, d);
  if (!current || !pending) return rc::kInvalidArgument;
  *current = *pending = c.preset().ecc ? 1 : 0;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t d, int cause, unsigned int* count,
                                                  unsigned long long* addresses) {
  SIM_DEVICE_CALL(nvmlDeviceGetRetiredPages, d);
  if (!count || cause < 0 || cause > 1) return rc::kInvalidArgument;
  if (c.preset().remaps_rows || !c.preset().ecc) return rc::kNotSupported;
  unsigned n = cause == 0 ? c.st.retired_sbe : c.st.retired_dbe;
  if (*count < n) {
    *count = n;
    return rc::kInsufficientSize;
  }
  if (n > 0 && !addresses) return rc::kInvalidArgument;
  for (unsigned i = 0; i < n; ++i) {
    double h = Noise01(c.sim->scenario().seed, c.gpu, i, 100 + static_cast<unsigned>(cause));
    addresses[i] = static_cast<unsigned long long>(h * (1ull << 22)) << 12;  // page aligned
  }
  *count = n;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetRetiredPagesPendingStatus(nvmlDevice_t d, int* is_pending) {
  SIM_DEVICE_CALL(nvmlDeviceGetRetiredPagesPendingStatus, d);
  if (!is_pending) return rc::kInvalidArgument;
  if (c.preset().remaps_rows || !c.preset().ecc) return rc::kNotSupported;
  *is_pending = c.st.retired_pending ? 1 : 0;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned int* corr,
                                                  unsigned int* unc, unsigned int* pending,
                                                  unsigned int* failure) {
  SIM_DEVICE_CALL(nvmlDeviceGetRemappedRows, d);
  if (!corr || !unc || !pending || !failure) return rc::kInvalidArgument;
  if (!c.preset().remaps_rows || !c.preset().ecc || c.spec().mig_enabled) {
    return rc::kNotSupported;
  }
  *corr = c.st.remap_corr;
  *unc = c.st.remap_unc;
  *pending = c.st.remap_pending ? 1 : 0;
  *failure = c.st.remap_failure ? 1 : 0;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned int link,
                                                 int* is_active) {
  SIM_DEVICE_CALL(nvmlDeviceGetNvLinkState, d);
  if (!is_active) return rc::kInvalidArgument;
  if (c.preset().nvlink_links == 0) return rc::kNotSupported;
  if (link >= c.preset().nvlink_links) return rc::kInvalidArgument;
  *is_active = c.st.link_down[link] ? 0 : 1;
  return rc::kSuccess;
}

SIM_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned int link,
                                                        int counter, unsigned long long* value) {
  SIM_DEVICE_CALL(nvmlDeviceGetNvLinkErrorCounter, d);
  if (!value || counter < 0 || counter > 4) return rc::kInvalidArgument;
  if (c.preset().nvlink_links == 0) return rc::kNotSupported;
  if (link >= c.preset().nvlink_links) return rc::kInvalidArgument;
  const LinkErrors& e = c.st.link_errors[link];
  const double values[] = {e.replay, e.recovery, e.crc_flit, e.crc_data, e.ecc_data};
  *value = static_cast<unsigned long long>(values[counter]);
  return rc::kSuccess;
}
