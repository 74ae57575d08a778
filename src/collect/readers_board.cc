// Readers of board facts that dcgm-exporter serves as fields: BAR1, the
// modes, the device count, the InfoROM and a vGPU guest's licence (all slow tier).
#include "collect/readers.h"

namespace gpuscope::collect {

using enum Metric;

void ReadBar1(ReadContext& ctx) {
  if (!ctx.Due(kBar1Total)) return;
  auto bar1 =
      ctx.Try<nvml::Bar1Memory>("nvmlDeviceGetBAR1MemoryInfo", [&] { return ctx.device().Bar1(); });
  if (!bar1) return;
  ctx.Set(kBar1Total, static_cast<double>(bar1->total_bytes));
  ctx.Set(kBar1Used, static_cast<double>(bar1->used_bytes));
  ctx.Set(kBar1Free, static_cast<double>(bar1->free_bytes));
}

unsigned GuestLicenseState(const nvml::GuestLicense& license, double now) {
  if (license.licensed) return nvml::kGuestLicenseLicensed;
  if (!license.expires_unix) return nvml::kGuestLicenseUnlicensed;
  const double since = now - static_cast<double>(*license.expires_unix);
  return since < nvml::kVgpuLicenseGraceSeconds ? nvml::kGuestLicenseGrace
                                                : nvml::kGuestLicenseRestricted;
}

// A vGPU guest (virtualization mode 2, read before): the licence of its virtual GPU.
void ReadGuestLicense(ReadContext& ctx) {
  if (!ctx.Due(kVgpuLicensed) || !ctx.Has(kVirtualizationMode) ||
      ctx.reading().sample.Get(kVirtualizationMode) != nvml::kVirtualizationGuestVgpu) {
    return;
  }
  auto license = ctx.Try<nvml::GuestLicense>("nvmlDeviceGetGridLicensableFeatures_v4",
                                             [&] { return ctx.device().GridLicense(); });
  if (!license) return;
  ctx.Set(kVgpuLicensed, license->licensed ? 1 : 0);
  ctx.Set(kVgpuLicenseState, GuestLicenseState(*license, ctx.reading().t));
}

void ReadModes(ReadContext& ctx) {
  if (!ctx.Due(kComputeMode)) return;
  const nvml::Device& d = ctx.device();
  if (auto mode = ctx.Try<int>("nvmlDeviceGetComputeMode", [&] { return d.ComputeMode(); })) {
    ctx.Set(kComputeMode, *mode);
  }
  if (auto on =
          ctx.Try<bool>("nvmlDeviceGetPersistenceMode", [&] { return d.PersistenceMode(); })) {
    ctx.Set(kPersistenceMode, *on ? 1 : 0);
  }
  if (auto mode =
          ctx.Try<int>("nvmlDeviceGetVirtualizationMode", [&] { return d.VirtualizationMode(); })) {
    ctx.Set(kVirtualizationMode, *mode);
  }
}

void ReadDeviceCount(ReadContext& ctx) {
  if (!ctx.Due(kDeviceCount)) return;
  if (auto n =
          ctx.Try<unsigned>("nvmlDeviceGetCount", [&] { return ctx.library().DeviceCount(); })) {
    ctx.Set(kDeviceCount, *n);
  }
}

void ReadInforom(ReadContext& ctx) {
  if (!ctx.Due(kInforomChecksum)) return;
  const nvml::Device& d = ctx.device();
  if (auto sum = ctx.Try<uint32_t>("nvmlDeviceGetInforomConfigurationChecksum",
                                   [&] { return d.InforomChecksum(); })) {
    ctx.Set(kInforomChecksum, *sum);
  }
  if (auto valid = ctx.Try<bool>("nvmlDeviceValidateInforom", [&] { return d.InforomValid(); })) {
    ctx.Set(kInforomValid, *valid ? 1 : 0);
  }
}

namespace {

void SetFlag(ReadContext& ctx, Metric m, std::optional<bool> flag) {
  if (flag) ctx.Set(m, *flag ? 1 : 0);
}

}  // namespace

void ReadFabric(ReadContext& ctx) {
  if (!ctx.Due(kFabricState)) return;
  auto fabric = ctx.Try<nvml::FabricInfo>("nvmlDeviceGetGpuFabricInfoV",
                                          [&] { return ctx.device().Fabric(); });
  if (!fabric) return;
  const bool completed = fabric->state == 3;  // NVML_GPU_FABRIC_STATE_COMPLETED
  // DCGM's dcgmFabricManagerStatus_t: a completed registration is 3 success or 4 failure.
  ctx.Set(kFabricManagerStatus, completed ? (fabric->status == 0 ? 3 : 4) : fabric->state);
  ctx.Set(kFabricState, fabric->state);
  ctx.Set(kFabricErrorCode, completed ? fabric->status : 0);
  ctx.Set(kFabricCliqueId, fabric->clique_id);
  ctx.Set(kFabricHealthMask, fabric->health_mask);
  SetFlag(ctx, kFabricDegradedBandwidth, fabric->degraded_bandwidth);
  SetFlag(ctx, kFabricRouteRecovery, fabric->route_recovery);
  SetFlag(ctx, kFabricRouteUnhealthy, fabric->route_unhealthy);
  SetFlag(ctx, kFabricAccessTimeoutRecovery, fabric->access_timeout_recovery);
  if (fabric->incorrect_configuration) {
    ctx.Set(kFabricIncorrectConfig, *fabric->incorrect_configuration);
  }
  ctx.reading().sample.fabric_cluster_uuid = fabric->cluster_uuid;
}

}  // namespace gpuscope::collect