#include "collect/readers.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <utility>

#include "collect/catalog_rows.h"

namespace gpuscope::collect {
namespace {

using enum Metric;
using nvml::ClockDomain;
using nvml::TempThreshold;

// Milliwatts become watts by division: x / 1000 is the double nearest the
// decimal value, so 614310 mW prints 614.31 (x * 1e-3 gave 614.3100000000001).
constexpr Scale kMwToW = Scale::kMilliToUnit;
constexpr int kUnknownPState = 32;

bool AnyDue(const ReadContext& ctx, std::initializer_list<Metric> metrics) {
  for (Metric m : metrics) {
    if (ctx.Due(m)) return true;
  }
  return false;
}

// One call filling one metric: `fn` returns Result<T>; `scale` converts.
template <typename T, typename Fn>
void ReadOne(ReadContext& ctx, Metric m, std::string_view call, Fn&& fn,
             Scale scale = Scale::kIdentity) {
  if (!ctx.Due(m)) return;
  if (auto v = ctx.Try<T>(call, std::forward<Fn>(fn))) {
    ctx.Set(m, Convert(static_cast<double>(*v), scale));
  }
}

// The rows read through GPM, in catalog order: their ids form one request.
constexpr std::size_t CountGpmRows() {
  std::size_t n = 0;
  for (const MetricDef& def : catalog_rows::kRows) n += def.read.gpm.id != 0 ? 1 : 0;
  return n;
}
constexpr auto kGpmRows = [] {
  std::array<const MetricDef*, CountGpmRows()> rows{};
  std::size_t n = 0;
  for (const MetricDef& def : catalog_rows::kRows) {
    if (def.read.gpm.id != 0) rows[n++] = &def;
  }
  return rows;
}();

// Rows of `source`, in catalog order, each read by one call whose name and
// argument the row gives: `get(arg)` returns Result<T>.
template <typename T, typename Get>
void ReadEachRow(ReadContext& ctx, Source source, Get get) {
  for (const MetricDef& def : catalog_rows::kRows) {
    if (def.source != source) continue;
    ReadOne<T>(ctx, def.id, def.read.call.name, [&] { return get(def.read.call.arg); });
  }
}

void SetGpmMetrics(ReadContext& ctx, const std::vector<Result<double>>& values, GpmState& gpm) {
  gpm.last_values.clear();
  for (std::size_t i = 0; i < values.size() && i < kGpmRows.size(); ++i) {
    if (!values[i].ok()) continue;
    const double value = *values[i] * kGpmRows[i]->read.gpm.to_stored;
    ctx.Set(kGpmRows[i]->id, value);
    gpm.last_values.emplace_back(kGpmRows[i]->id, value);
  }
}

// Between two GPM samples: the values of the last one still hold.
void CarryGpmMetrics(ReadContext& ctx, const GpmState& gpm) {
  for (const auto& [metric, value] : gpm.last_values) ctx.Set(metric, value);
}

}  // namespace

void ReadUtilization(ReadContext& ctx) {
  if (!AnyDue(ctx, {kGpuUtil, kMemCopyUtil})) return;
  auto u = ctx.Try<nvml::UtilizationRates>("nvmlDeviceGetUtilizationRates",
                                           [&] { return ctx.device().Utilization(); });
  if (!u) return;
  ctx.Set(kGpuUtil, u->gpu_percent);
  ctx.Set(kMemCopyUtil, u->memory_percent);
}

void ReadEncoder(ReadContext& ctx) {
  if (!ctx.Due(kEncoderUtil)) return;
  auto u = ctx.Try<nvml::CodecUtilization>("nvmlDeviceGetEncoderUtilization",
                                           [&] { return ctx.device().EncoderUtilization(); });
  if (u) ctx.Set(kEncoderUtil, u->percent);
}

void ReadDecoder(ReadContext& ctx) {
  if (!ctx.Due(kDecoderUtil)) return;
  auto u = ctx.Try<nvml::CodecUtilization>("nvmlDeviceGetDecoderUtilization",
                                           [&] { return ctx.device().DecoderUtilization(); });
  if (u) ctx.Set(kDecoderUtil, u->percent);
}

void ReadMemoryInfo(ReadContext& ctx) {
  if (!AnyDue(ctx, {kMemoryUsed, kMemoryFree, kMemoryTotal, kMemoryReserved, kFbUsedRatio})) return;
  auto m =
      ctx.Try<nvml::MemoryInfo>("nvmlDeviceGetMemoryInfo", [&] { return ctx.device().Memory(); });
  if (!m) return;
  ctx.Set(kMemoryTotal, static_cast<double>(m->total_bytes));
  ctx.Set(kMemoryUsed, static_cast<double>(m->used_bytes));
  ctx.Set(kMemoryFree, static_cast<double>(m->free_bytes));
  const uint64_t reserved = m->reserved_bytes.value_or(0);
  if (m->reserved_bytes) ctx.Set(kMemoryReserved, static_cast<double>(reserved));
  // DCGM's FB_USED_PERCENT: used / (total - reserved), a ratio despite its name.
  if (m->total_bytes > reserved) {
    ctx.Set(kFbUsedRatio,
            static_cast<double>(m->used_bytes) / static_cast<double>(m->total_bytes - reserved));
  }
}

void ReadTemperature(ReadContext& ctx) {
  ReadOne<uint32_t>(ctx, kGpuTemp, "nvmlDeviceGetTemperature",
                    [&] { return ctx.device().Temperature(); });
}

void ReadThresholds(ReadContext& ctx) {
  ReadEachRow<uint32_t>(ctx, Source::kThresholds, [&](unsigned kind) {
    return ctx.device().TemperatureThreshold(static_cast<TempThreshold>(kind));
  });
}

void ReadPower(ReadContext& ctx) {
  ReadOne<uint32_t>(
      ctx, kPowerUsage, "nvmlDeviceGetPowerUsage",
      [&] { return ctx.device().PowerUsageMilliwatts(); }, kMwToW);
}

void ReadPowerLimits(ReadContext& ctx) {
  const nvml::Device& d = ctx.device();
  ReadOne<uint32_t>(
      ctx, kPowerLimit, "nvmlDeviceGetEnforcedPowerLimit", [&] { return d.EnforcedPowerLimit(); },
      kMwToW);
  ReadOne<uint32_t>(
      ctx, kPowerManagementLimit, "nvmlDeviceGetPowerManagementLimit",
      [&] { return d.PowerManagementLimit(); }, kMwToW);
  ReadOne<uint32_t>(
      ctx, kPowerDefaultLimit, "nvmlDeviceGetPowerManagementDefaultLimit",
      [&] { return d.DefaultPowerLimit(); }, kMwToW);
  if (!AnyDue(ctx, {kPowerMinLimit, kPowerMaxLimit})) return;
  auto range = ctx.Try<nvml::PowerLimitRange>("nvmlDeviceGetPowerManagementLimitConstraints",
                                              [&] { return d.PowerLimitConstraints(); });
  if (!range) return;
  ctx.Set(kPowerMinLimit, Convert(range->min_mw, kMwToW));
  ctx.Set(kPowerMaxLimit, Convert(range->max_mw, kMwToW));
}

void ReadClocks(ReadContext& ctx) {
  ReadEachRow<uint32_t>(ctx, Source::kClocks, [&](unsigned domain) {
    return ctx.device().Clock(static_cast<ClockDomain>(domain));
  });
}

void ReadMaxClocks(ReadContext& ctx) {
  ReadEachRow<uint32_t>(ctx, Source::kMaxClocks, [&](unsigned domain) {
    return ctx.device().MaxClock(static_cast<ClockDomain>(domain));
  });
}

void ReadClockEventReasons(ReadContext& ctx) {
  const nvml::Device& d = ctx.device();
  ReadOne<uint64_t>(ctx, kClockReasons, "nvmlDeviceGetCurrentClocksEventReasons",
                    [&] { return d.ClockReasons(); });
  ReadOne<uint64_t>(ctx, kClockReasonsSupported, "nvmlDeviceGetSupportedClocksEventReasons",
                    [&] { return d.SupportedClockReasons(); });
}

void ReadFan(ReadContext& ctx) {
  ReadOne<uint32_t>(ctx, kFanSpeed, "nvmlDeviceGetFanSpeed",
                    [&] { return ctx.device().FanSpeed(); });
}

void ReadPerformanceState(ReadContext& ctx) {
  if (!ctx.Due(kPState)) return;
  auto p = ctx.Try<int>("nvmlDeviceGetPerformanceState",
                        [&] { return ctx.device().PerformanceState(); });
  if (p && *p >= 0 && *p != kUnknownPState) ctx.Set(kPState, *p);
}

void ReadPcieLink(ReadContext& ctx) {
  if (!AnyDue(ctx, {kPcieLinkGen, kPcieLinkGenMax, kPcieLinkWidth, kPcieLinkWidthMax})) return;
  auto link =
      ctx.Try<nvml::PcieLinkInfo>("nvmlDeviceGetPcieLink", [&] { return ctx.device().PcieLink(); });
  if (!link) return;
  ctx.Set(kPcieLinkGen, link->gen_current);
  ctx.Set(kPcieLinkGenMax, link->gen_max);
  ctx.Set(kPcieLinkWidth, link->width_current);
  ctx.Set(kPcieLinkWidthMax, link->width_max);
}

void ReadGpm(ReadContext& ctx, GpmState& gpm) {
  if (!ctx.reading().tiers.fast || !gpm.sampler || !ctx.Allows("nvmlGpmSampleGet")) return;
  const double t = ctx.reading().t;
  const bool spaced = t - gpm.last_sample_t >= kGpmMinSpacingSeconds - 1e-9;
  if (gpm.sampler->samples_taken() > 0 && !spaced) {
    CarryGpmMetrics(ctx, gpm);
    return;
  }
  if (!ctx.Try<bool>("nvmlGpmSampleGet", [&]() -> Result<bool> {
        GPUSCOPE_RETURN_IF_ERROR(gpm.sampler->Sample());
        return true;
      })) {
    return;
  }
  gpm.last_sample_t = t;
  if (gpm.sampler->samples_taken() < 2) return;
  std::array<uint32_t, kGpmRows.size()> ids{};
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = kGpmRows[i]->read.gpm.id;
  auto values = ctx.Try<std::vector<Result<double>>>("nvmlGpmMetricsGet",
                                                     [&] { return gpm.sampler->Metrics(ids); });
  if (!values) return;
  SetGpmMetrics(ctx, *values, gpm);
  gpm.pcie_from_gpm = ctx.Has(kPcieTxBytesRate);
}

void ReadPcieThroughput(ReadContext& ctx, const GpmState& gpm) {
  if (!ctx.reading().tiers.pcie || gpm.pcie_from_gpm) return;
  const nvml::Device& d = ctx.device();
  ReadOne<uint32_t>(
      ctx, kPcieTxBytesRate, "nvmlDeviceGetPcieThroughput",
      [&] { return d.PcieThroughput(nvml::PcieDirection::kTx); }, Scale::kKibiToUnit);
  ReadOne<uint32_t>(
      ctx, kPcieRxBytesRate, "nvmlDeviceGetPcieThroughput",
      [&] { return d.PcieThroughput(nvml::PcieDirection::kRx); }, Scale::kKibiToUnit);
}

}  // namespace gpuscope::collect
