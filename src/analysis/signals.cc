#include "analysis/signals.h"

#include <algorithm>
#include <cmath>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

using enum Metric;

constexpr double kPercent = 0.01;
// A link sample at or above this share of capacity counts as busy.
constexpr double kLinkBusyPoint = 0.8;
// Memory growth slower than this is noise, not a trend (1 MiB/s).
constexpr double kMinGrowthBytesPerSecond = 1024.0 * 1024.0;
// A trend must explain this much of the variance to predict anything.
constexpr double kMinTrendR2 = 0.6;
// At or above this fill the GPU is out of memory now (ETA 0).
constexpr double kFullRatio = 0.99;
// The memory trend is fitted over max(this, window / 3) trailing seconds, so a
// leak that began mid-window is measured at its current rate.
constexpr double kMinTrendSeconds = 60;
// Clock reason bits (NVML clock event reasons).
constexpr uint64_t kSwPowerCapBit = 0x4;
constexpr uint64_t kThermalBits = 0x20 | 0x40;  // SW and HW thermal slowdown
constexpr uint64_t kHwPowerBrakeBit = 0x80;

// What says whether kernels ran: nvmlDeviceGetUtilizationRates where the
// device answers it, else GPM's graphics-engine activity (a MIG instance:
// NVML gives utilization per GPU only, so each instance is judged on its own
// GPM activity, never its parent's).
Metric ActivityMetric(std::span<const WindowPoint> points) {
  for (const WindowPoint& p : points) {
    if (p.Has(kGpuUtil)) return kGpuUtil;
  }
  return kGrEngineActive;
}

// Records since when the condition of `o` holds: the change point of its
// indicator, else the window's start (the default every onset has).
void SetOnset(Signals& s, OnsetSignal o, const Series& indicator) {
  s.onset[static_cast<std::size_t>(o)] =
      RiseOnset(indicator, kOnsetMinRise.value, kOnsetMinSide.value).value_or(s.start);
}

// Which points come before `since`.
std::vector<bool> Before(const Series& s, double since) {
  std::vector<bool> keep(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) keep[i] = s.t[i] < since;
  return keep;
}

std::optional<double> Last(std::span<const WindowPoint> points, const GpuSample& latest, Metric m) {
  if (latest.Has(m)) return latest.Get(m);
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if (it->Has(m)) return it->Get(m);
  }
  return std::nullopt;
}

// The highest value over the window and the latest sample: a PCIe link parks
// at a lower generation when idle and retrains under load, so the speed it
// trained to is its best in the window, not its last.
std::optional<double> Peak(std::span<const WindowPoint> points, const GpuSample& latest, Metric m) {
  std::optional<double> best;
  if (latest.Has(m)) best = latest.Get(m);
  for (const WindowPoint& p : points) {
    if (p.Has(m) && (!best || p.Max(m) > *best)) best = p.Max(m);
  }
  return best;
}

std::optional<Summary> SummaryOf(std::span<const WindowPoint> points, Metric m, double scale) {
  Series s = Extract(points, m, scale);
  if (s.empty()) return std::nullopt;
  return Summarize(s);
}

void ActivitySignals(std::span<const WindowPoint> points, Signals& s) {
  Series util = Extract(points, ActivityMetric(points), kPercent);
  s.util = Summarize(util);
  s.util_spread = TrimmedStddev(util, kSteadyTrim.value);
  SetOnset(s, OnsetSignal::kBusy, Indicator(util, AtLeast(kComputeUtil.value)));
  SetOnset(s, OnsetSignal::kGaps, Indicator(util, Below(kGapUtil)));
  s.sm_active = SummaryOf(points, kSmActive, kPercent);
  s.gpm = s.sm_active.has_value();
  Series dram = Extract(points, kDramActive, kPercent);
  Series copy = Extract(points, kMemCopyUtil, kPercent);
  if (!dram.empty()) s.dram_active = Summarize(dram);
  if (!copy.empty()) s.mem_copy = Summarize(copy);
  SetOnset(s, OnsetSignal::kDram,
           dram.empty() ? Indicator(copy, AtLeast(kMemCopyHigh.value))
                        : Indicator(dram, AtLeast(kDramHigh.value)));
  s.idle_share = ShareWhere(util, Below(kIdleUtil));
  s.gap_share = ShareWhere(util, Below(kGapUtil));
  s.busy_share = ShareWhere(util, AtLeast(kBusyUtil));
  s.gap_runs = CountRuns(util, Below(kGapUtil));
  s.work_runs = CountRuns(util, AtLeast(kGapUtil));
  s.trailing_idle_seconds = TrailingRunSeconds(util, Below(kIdleUtil));
  if (s.trailing_idle_seconds > 0) {
    // The points before the trailing idle run started.
    double start = util.t.back() - s.trailing_idle_seconds +
                   Weight(util, util.size() - 1, MedianSpacing(util));
    std::vector<bool> before(util.size());
    for (std::size_t i = 0; i < util.size(); ++i) before[i] = util.t[i] < start - 1e-9;
    s.util_before_idle = Summarize(Filter(util, before));
    s.load_before_idle_seconds = std::max(0.0, start - util.t.front());
    s.onset[static_cast<std::size_t>(OnsetSignal::kIdleRun)] = std::max(s.start, start);
  }
}

// The series with its largest rise within kAllocationStepSeconds taken out
// (the points inside it dropped, those after it lowered by it) when that rise
// makes at least kAllocationStepShare of the series' own rise: one allocation
// followed by a flat line is not growth toward capacity.
Series WithoutAllocationStep(const Series& s) {
  const std::size_t n = s.size();
  if (n < 3) return s;
  std::size_t from = 0, to = 0;
  double jump = 0;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = i + 1; j < n && s.t[j] - s.t[i] <= kAllocationStepSeconds.value; ++j) {
      if (s.v[j] - s.v[i] > jump) jump = s.v[j] - s.v[i], from = i, to = j;
    }
  }
  const double rise = s.v.back() - s.v.front();
  if (jump <= 0 || rise <= 0 || jump < kAllocationStepShare.value * rise) return s;
  Series lowered = s;
  std::vector<bool> keep(n, true);
  for (std::size_t k = from + 1; k < n; ++k) {
    if (k < to) {
      keep[k] = false;
      continue;
    }
    lowered.v[k] -= jump;
    if (k < lowered.lo.size()) lowered.lo[k] -= jump;
    if (k < lowered.hi.size()) lowered.hi[k] -= jump;
  }
  return Filter(lowered, keep);
}

// The memory trend of a span: its line once an allocation step is taken out.
LinearFit FitGrowth(const Series& s) { return FitLine(WithoutAllocationStep(s)); }

void MemorySignals(std::span<const WindowPoint> points, const GpuSample& latest,
                   const DiagnoseOptions& options, Signals& s) {
  std::optional<double> used = Last(points, latest, kMemoryUsed);
  std::optional<double> free = Last(points, latest, kMemoryFree);
  std::optional<double> total = Last(points, latest, kMemoryTotal);
  std::optional<double> reserved = Last(points, latest, kMemoryReserved);
  if (used && free) {
    s.mem_capacity = *used + *free;
  } else if (total) {
    s.mem_capacity = *total - reserved.value_or(0);
  }
  s.mem_used_last = used;
  Series series = Extract(points, kMemoryUsed);
  if (series.size() < 3 || !s.mem_capacity || *s.mem_capacity <= 0) return;
  SetOnset(s, OnsetSignal::kMemory,
           Indicator(series, AtLeast(kMemoryNearFull.value * *s.mem_capacity)));
  double span = std::max(kMinTrendSeconds, options.window_seconds / 3);
  LinearFit fit = FitGrowth(Since(series, series.t.back() - span));
  double min_r2 = kMinTrendR2;
  // A leak that began late: the line after the change point, not one that
  // mixes the flat part before it (which predicts the OOM far too late).
  if (std::optional<std::size_t> split = TwoLineSplit(series, kLeakMinSeconds.value)) {
    const double since = series.t[*split];
    LinearFit leak = FitGrowth(Since(series, since));
    LinearFit flat = FitLine(Filter(series, Before(series, since)));
    if (leak.slope >= kMinGrowthBytesPerSecond && leak.r2 >= kLeakMinR2.value &&
        leak.slope > 2 * std::max(0.0, flat.slope)) {
      fit = leak, min_r2 = kLeakMinR2.value;
      s.mem_trend_since = since;
      s.onset[static_cast<std::size_t>(OnsetSignal::kMemory)] = since;
    } else if (leak.slope < kMinGrowthBytesPerSecond && since > series.t.back() - span) {
      // One step (a job loading its model) and flat since: the trailing fit
      // across the step is no growth; the line after it is the trend.
      fit = leak;
    }
  }
  s.mem_trend = fit;
  double now = used.value_or(series.v.back());
  if (now >= kFullRatio * *s.mem_capacity) {
    s.oom_eta_seconds = 0;
  } else if (fit.slope >= kMinGrowthBytesPerSecond && fit.r2 >= min_r2) {
    double at_end = std::max(now, fit.At(series.t.back()));
    s.oom_eta_seconds = std::max(0.0, (*s.mem_capacity - at_end) / fit.slope);
  }
}

// Per point, the share of its time any bit of `mask` held the clocks (bits),
// else the rise of the counters over the time to the next point.
Series ReasonSeries(std::span<const WindowPoint> points, uint64_t mask, Metric a,
                    std::optional<Metric> b) {
  Series out;
  for (const WindowPoint& p : points) {
    if (!p.Has(kClockReasons)) continue;
    double share = 0;
    for (unsigned bit = 0; bit < 64; ++bit) {
      if (mask >> bit & 1) share = std::max(share, p.BitTimeShare(kClockReasons, bit));
    }
    out.Push(p.t, share, p.seconds, share, share, 0);
  }
  if (!out.empty()) return out;
  Series ca = Extract(points, a), cb = b ? Extract(points, *b) : Series();
  for (std::size_t i = 1; i < ca.size(); ++i) {
    const double dt = ca.t[i] - ca.t[i - 1];
    if (dt <= 0) continue;
    double rate = (ca.v[i] - ca.v[i - 1]) / dt;
    if (i < cb.size() && cb.t[i] == ca.t[i]) rate = std::max(rate, (cb.v[i] - cb.v[i - 1]) / dt);
    rate = std::clamp(rate, 0.0, 1.0);
    out.Push(ca.t[i - 1], rate, dt, rate, rate, 0);
  }
  return out;
}

// Share of the window for a counter pair (max: the reasons overlap), else bits.
std::optional<double> ThrottleShare(std::span<const WindowPoint> points, Metric a,
                                    std::optional<Metric> b, uint64_t mask, bool* from_counters) {
  std::optional<double> ra = CounterRate(points, a);
  std::optional<double> rb = b ? CounterRate(points, *b) : std::nullopt;
  if (ra || rb) {
    *from_counters = true;
    return std::clamp(std::max(ra.value_or(0), rb.value_or(0)), 0.0, 1.0);
  }
  return ReasonShare(points, mask);
}

void PowerClockSignals(std::span<const WindowPoint> points, const GpuSample& latest, Signals& s) {
  // Clocks and power are read over busy points: idle clocks say nothing.
  const Metric activity = ActivityMetric(points);
  std::vector<WindowPoint> busy;
  for (const WindowPoint& p : points) {
    if (p.Has(activity) && p.Get(activity) * kPercent >= kBusyUtil) busy.push_back(p);
  }
  if (auto power = SummaryOf(points, kPowerUsage, 1)) s.power_mean_w = power->mean;
  s.power_limit_w = Last(points, latest, kPowerLimit);
  s.clock_max_mhz = Last(points, latest, kMaxSmClock);
  Series clock = Extract(busy, kSmClock);
  if (!clock.empty()) {
    s.clock_mean_mhz = Summarize(clock).mean;
    auto [early, late] = HeadTailMeans(clock, 0.2);
    s.clock_early_mhz = early;
    s.clock_late_mhz = late;
  }
  bool counters = false;
  s.thermal_share =
      ThrottleShare(points, kThrottleHwThermal, kThrottleSwThermal, kThermalBits, &counters);
  s.sw_power_share =
      ThrottleShare(points, kThrottleSwPowerCap, std::nullopt, kSwPowerCapBit, &counters);
  s.hw_brake_share =
      ThrottleShare(points, kThrottleHwPowerBrake, std::nullopt, kHwPowerBrakeBit, &counters);
  s.reasons_from_counters = counters;
  SetOnset(s, OnsetSignal::kThermal,
           ReasonSeries(points, kThermalBits, kThrottleHwThermal, kThrottleSwThermal));
  SetOnset(s, OnsetSignal::kPower,
           ReasonSeries(points, kSwPowerCapBit | kHwPowerBrakeBit, kThrottleSwPowerCap,
                        kThrottleHwPowerBrake));
  if (auto temp = SummaryOf(points, kGpuTemp, 1)) s.temp_max = temp->max;
  s.slowdown_temp = Last(points, latest, kSlowdownTemp);
}

// Per-point rate of the busier direction: gauges when present, else the
// derivative of the cumulative byte counters.
Series LinkRate(std::span<const WindowPoint> points, Metric tx_rate, Metric rx_rate,
                std::optional<Metric> tx_total, std::optional<Metric> rx_total) {
  Series out;
  for (const WindowPoint& p : points) {
    if (!p.Has(tx_rate) && !p.Has(rx_rate)) continue;
    auto of = [&p](Metric m, double (WindowPoint::*get)(Metric) const) {
      return p.Has(m) ? (p.*get)(m) : 0.0;
    };
    // The busier direction; its extremes bound those of the maximum.
    out.Push(p.t, std::max(of(tx_rate, &WindowPoint::Get), of(rx_rate, &WindowPoint::Get)),
             p.seconds, std::max(of(tx_rate, &WindowPoint::Min), of(rx_rate, &WindowPoint::Min)),
             std::max(of(tx_rate, &WindowPoint::Max), of(rx_rate, &WindowPoint::Max)), 0);
  }
  if (!out.empty() || !tx_total || !rx_total) return out;
  Series tx = Extract(points, *tx_total), rx = Extract(points, *rx_total);
  for (std::size_t i = 1; i < tx.size() && i < rx.size(); ++i) {
    double dt = tx.t[i] - tx.t[i - 1];
    if (dt <= 0 || rx.t[i] != tx.t[i]) continue;
    // The mean rate since the previous point (counters hold their value at t).
    const double rate = std::max({0.0, (tx.v[i] - tx.v[i - 1]) / dt, (rx.v[i] - rx.v[i - 1]) / dt});
    out.Push(tx.t[i - 1], rate, dt, rate, rate, 0);
  }
  return out;
}

std::optional<LinkSignals> Link(const Series& rate, double capacity) {
  if (rate.empty() || capacity <= 0) return std::nullopt;
  LinkSignals l;
  l.capacity_bps = capacity;
  l.mean_bps = Summarize(rate).mean;
  l.mean_ratio = l.mean_bps / capacity;
  l.busy_share = ShareWhere(rate, AtLeast(kLinkBusyPoint * capacity));
  l.n = rate.size();
  return l;
}

void LinkSignalsOf(const GpuInfo& info, std::span<const WindowPoint> points,
                   const GpuSample& latest, const DiagnoseOptions& options, Signals& s) {
  s.pcie_gen = Peak(points, latest, kPcieLinkGen);
  s.pcie_gen_max = Last(points, latest, kPcieLinkGenMax);
  s.pcie_width = Last(points, latest, kPcieLinkWidth);
  s.pcie_width_max = Last(points, latest, kPcieLinkWidthMax);
  Series pcie_rate, nvlink_rate;
  double pcie_cap = 0;
  if (s.pcie_gen && s.pcie_width) {
    pcie_cap = PcieCapacityBytesPerSecond(static_cast<unsigned>(*s.pcie_gen),
                                          static_cast<unsigned>(*s.pcie_width));
    pcie_rate = LinkRate(points, kPcieTxBytesRate, kPcieRxBytesRate, std::nullopt, std::nullopt);
    s.pcie = Link(pcie_rate, pcie_cap);
  }
  // A width below the maximum is a fault whenever it shows; a generation
  // below it only matters under load (DetectPcieDegraded).
  Series width = Extract(points, kPcieLinkWidth), gen = Extract(points, kPcieLinkGen);
  if (s.pcie_width_max && s.pcie_width && *s.pcie_width < *s.pcie_width_max) {
    SetOnset(s, OnsetSignal::kPcie, Indicator(width, Below(*s.pcie_width_max)));
  } else if (s.pcie_gen_max) {
    SetOnset(s, OnsetSignal::kPcie, Indicator(gen, Below(*s.pcie_gen_max)));
  }
  unsigned links = info.nvlink_count;
  if (!latest.nvlink.empty()) {
    links = static_cast<unsigned>(std::count_if(latest.nvlink.begin(), latest.nvlink.end(),
                                                [](const NvLinkLink& l) { return l.active; }));
  }
  double gbps = options.nvlink_link_gbps > 0 ? options.nvlink_link_gbps
                                             : NvLinkGbpsPerLink(info.architecture);
  nvlink_rate =
      LinkRate(points, kNvLinkTxBytesRate, kNvLinkRxBytesRate, kNvLinkTxBytes, kNvLinkRxBytes);
  s.nvlink = Link(nvlink_rate, links * gbps * 1e9);
  // The onset of the link longer near its capacity (the one a saturation
  // finding names), else the one busier on average.
  const bool nvlink_busier =
      s.nvlink &&
      (!s.pcie || s.nvlink->busy_share > s.pcie->busy_share ||
       (s.nvlink->busy_share == s.pcie->busy_share && s.nvlink->mean_ratio > s.pcie->mean_ratio));
  const Series& rate = nvlink_busier ? nvlink_rate : pcie_rate;
  const double cap = nvlink_busier ? s.nvlink->capacity_bps : pcie_cap;
  if (cap > 0) SetOnset(s, OnsetSignal::kLink, Indicator(rate, AtLeast(kLinkBusyPoint * cap)));
}

void ProcessSignals(const GpuSample& latest, Signals& s) {
  s.process_count = latest.processes.size();
  for (const ProcessInfo& p : latest.processes) {
    if (p.sm_utilization) s.process_sm = s.process_sm.value_or(0) + *p.sm_utilization;
  }
  s.held_bytes = HeldBytes(latest).value_or(s.mem_used_last.value_or(0));
}

}  // namespace

std::optional<double> HeldBytes(const GpuSample& sample) {
  double held = 0;
  bool any_size = false;
  for (const ProcessInfo& p : sample.processes) {
    if (p.used_memory_bytes) any_size = true, held += static_cast<double>(*p.used_memory_bytes);
  }
  if (any_size) return held;
  // The driver may hide per-process memory, or the processes themselves (a
  // container without the host's PID namespace); the GPU's used memory is
  // then the best measure of what is held.
  if (sample.Has(Metric::kMemoryUsed)) return sample.Get(Metric::kMemoryUsed);
  return std::nullopt;
}

std::span<const WindowPoint> TrailingPoints(std::span<const WindowPoint> points, double window) {
  if (points.empty()) return {};
  const double since = points.back().t - window;
  // Points are in time order and a bucket covers [t, t + seconds) before the
  // next point starts, so the points that are in form a suffix.
  auto in = [since](const WindowPoint& p) {
    // A bucket that straddles the start is in: the window covers all of it.
    return p.t >= since || (p.samples > 1 && p.t + p.seconds > since);
  };
  auto first = std::find_if(points.begin(), points.end(), in);
  return points.subspan(static_cast<std::size_t>(first - points.begin()));
}

Signals ComputeSignals(const GpuInfo& info, std::span<const WindowPoint> points,
                       const GpuSample& latest, const DiagnoseOptions& options) {
  Signals s;
  s.points = points.size();
  if (!points.empty()) {
    s.start = points.front().t, s.end = points.back().t;
    s.span_seconds = s.end - s.start;
  }
  s.onset.fill(s.start);
  if (info.is_mig()) s.parent = "GPU " + std::to_string(info.index);
  ActivitySignals(points, s);
  MemorySignals(points, latest, options, s);
  PowerClockSignals(points, latest, s);
  LinkSignalsOf(info, points, latest, options, s);
  ProcessSignals(latest, s);
  VgpuSchedulerSignals(points, latest, s);
  return s;
}

std::vector<RecentSignals> ComputeRecentSignals(const GpuInfo& info,
                                                std::span<const WindowPoint> points,
                                                const GpuSample& latest,
                                                const DiagnoseOptions& options) {
  std::vector<RecentSignals> out;
  if (options.recent_seconds <= 0 || points.size() < 2) return out;
  for (double span : {options.recent_seconds, options.recent_seconds / 2}) {
    if (points.back().t - points.front().t <= span) continue;
    RecentSignals r;
    r.options = options;
    r.options.window_seconds = span;
    std::span<const WindowPoint> recent = TrailingPoints(points, span);
    if (recent.size() < 2) continue;
    r.signals = ComputeSignals(info, recent, latest, r.options);
    r.signals.span_name = "the last " + Duration(span);
    r.signals.recent = true;
    out.push_back(std::move(r));
  }
  return out;
}

double PcieCapacityBytesPerSecond(unsigned gen, unsigned width) {
  // Usable bytes/s per lane per direction after line encoding: 8b/10b for
  // gen 1-2, 128b/130b for gen 3-5, FLIT (PAM4) for gen 6.
  static constexpr double kPerLane[] = {0, 250e6, 500e6, 984.6e6, 1969.2e6, 3938.5e6, 7563e6};
  if (gen == 0 || gen >= std::size(kPerLane)) return 0;
  return kPerLane[gen] * width;
}

double NvLinkGbpsPerLink(const std::string& architecture) {
  // Per link per direction (shared/reference/gpu-models.md).
  if (architecture == "Blackwell") return 53.125;
  if (architecture == "Hopper") return 26.562;
  if (architecture == "Ampere") return 25.0;
  if (architecture == "Volta") return 25.0;
  return 25.0;
}

}  // namespace gpuscope::analysis
