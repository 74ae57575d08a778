// The hardware checks: memory, PCIe, NVLink, thermal, power.
#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "health/checks_internal.h"

namespace gpuscope::health::internal {
namespace {

constexpr uint64_t kReasonHwSlowdown = 0x8;
constexpr uint64_t kReasonSwThermal = 0x20;
constexpr uint64_t kReasonHwThermal = 0x40;
constexpr uint64_t kReasonHwPowerBrake = 0x80;
constexpr unsigned kAllLinks = std::numeric_limits<unsigned>::max();

bool AnyPresent(const GpuSample& s, std::initializer_list<Metric> metrics) {
  for (Metric m : metrics) {
    if (s.Has(m)) return true;
  }
  return false;
}

std::string LinkName(unsigned link) {
  return link == kAllLinks ? "all links" : "link " + std::to_string(link);
}

void CheckEcc(const GpuInput& in, CheckResult& r) {
  const GpuSample& s = in.sample;
  if (s.Find(Metric::kEccMode) == 0.0) {
    r.Note("ECC is disabled: memory errors are not detected");
  }
  if (auto dbe = s.Find(Metric::kEccDbeVolatile); dbe && *dbe > 0) {
    r.Raise(Verdict::kFail,
            fmt::format("uncorrectable (double-bit) ECC errors since the driver loaded: {} "
                        "(fail at > 0)",
                        Num(*dbe)),
            "Drain the GPU, reset it and run field diagnostics; RMA if it recurs (XID 48).");
  }
  if (auto sbe = s.Find(Metric::kEccSbeVolatile); sbe && *sbe > 0) {
    r.Note(fmt::format("corrected ECC errors since the driver loaded: {}", Num(*sbe)));
  }
  if (auto agg = s.Find(Metric::kEccDbeAggregate); agg && *agg > 0) {
    r.Note(fmt::format("uncorrectable ECC errors over the GPU's life: {}", Num(*agg)));
  }
  if (in.events && in.events->dbe_events > 0) {
    r.Note(fmt::format("double-bit ECC events seen: {}", in.events->dbe_events));
  }
}

void CheckRetiredPages(const GpuInput& in, CheckResult& r) {
  const GpuSample& s = in.sample;
  const HealthOptions& o = in.options;
  const std::optional<double> sbe = s.Find(Metric::kRetiredSbe);
  const std::optional<double> dbe = s.Find(Metric::kRetiredDbe);
  if (sbe || dbe) {
    const double total = sbe.value_or(0) + dbe.value_or(0);
    const std::string line = fmt::format("retired pages {} (single-bit {}, double-bit {})",
                                         Num(total), Num(sbe.value_or(0)), Num(dbe.value_or(0)));
    if (total >= o.retired_pages_fail) {
      r.Raise(Verdict::kFail, line + fmt::format(" >= {} (fail)", Num(o.retired_pages_fail)),
              "Drain the GPU and RMA it: its page retirement budget is used up.");
    } else if (dbe.value_or(0) > o.retired_dbe_fail) {
      r.Raise(Verdict::kFail,
              line + fmt::format(": double-bit {} > {} (fail)", Num(*dbe), Num(o.retired_dbe_fail)),
              "Drain the GPU and RMA it: too many pages retired for uncorrectable errors.");
    } else if (total > 0) {
      r.Note(line);
    }
  }
  if (s.Find(Metric::kRetiredPending).value_or(0) > 0) {
    r.Raise(Verdict::kWarn, "page retirement pending: it takes effect at the next GPU reset",
            "Drain the GPU and reset it at the next window so the retirement takes effect.");
  }
}

void CheckRemappedRows(const GpuInput& in, CheckResult& r) {
  const GpuSample& s = in.sample;
  if (s.Find(Metric::kRemappedFailure).value_or(0) > 0) {
    r.Raise(Verdict::kFail, "row remapping failed (remap failure flag set)",
            "Drain the GPU, reset it or reboot the node; RMA candidate (XID 64).");
  }
  if (s.Find(Metric::kRemappedPending).value_or(0) > 0) {
    r.Raise(Verdict::kWarn, "row remap pending: it takes effect at the next GPU reset",
            "Drain the GPU and reset it at the next window so the remap takes effect (XID 63).");
  }
  const std::optional<double> unc = s.Find(Metric::kRemappedUncorrectable);
  const std::optional<double> cor = s.Find(Metric::kRemappedCorrectable);
  if (unc && *unc >= in.options.remapped_uncorrectable_warn) {
    r.Raise(Verdict::kWarn,
            fmt::format("rows remapped for uncorrectable errors: {} >= {} (warn)", Num(*unc),
                        Num(in.options.remapped_uncorrectable_warn)),
            "Plan an RMA: the GPU's spare rows are running out.");
  } else if (unc.value_or(0) + cor.value_or(0) > 0) {
    r.Note(fmt::format("remapped rows: correctable {}, uncorrectable {}", Num(cor.value_or(0)),
                       Num(unc.value_or(0))));
  }
}

}  // namespace

void CheckMemory(const GpuInput& in, CheckResult& r) {
  using enum Metric;
  r.evaluated =
      AnyPresent(in.sample, {kEccMode, kEccSbeVolatile, kEccDbeVolatile, kEccDbeAggregate,
                             kRetiredSbe, kRetiredDbe, kRetiredPending, kRemappedCorrectable,
                             kRemappedUncorrectable, kRemappedPending, kRemappedFailure});
  if (!r.evaluated) return;
  CheckEcc(in, r);
  CheckRetiredPages(in, r);
  CheckRemappedRows(in, r);
  if (r.evidence.empty()) r.Note("no memory errors");
}

void CheckPcie(const GpuInput& in, CheckResult& r) {
  const GpuSample& s = in.sample;
  using enum Metric;
  r.evaluated = AnyPresent(s, {kPcieReplays, kPcieLinkWidth, kPcieLinkGen});
  if (!r.evaluated) return;
  const auto gen = static_cast<unsigned>(s.Find(kPcieLinkGen).value_or(s.Get(kPcieLinkGenMax)));
  const auto width =
      static_cast<unsigned>(s.Find(kPcieLinkWidth).value_or(s.Get(kPcieLinkWidthMax)));
  if (s.Has(kPcieLinkWidth) && s.Has(kPcieLinkWidthMax) && s.Get(kPcieLinkWidth) > 0 &&
      s.Get(kPcieLinkWidth) < s.Get(kPcieLinkWidthMax)) {
    r.Raise(Verdict::kWarn,
            fmt::format("PCIe link x{} is narrower than its maximum x{}", width,
                        Num(s.Get(kPcieLinkWidthMax))),
            "Reseat the GPU and check the slot and riser at the next window.");
  }
  if (s.Has(kPcieLinkGen) && s.Has(kPcieLinkGenMax) &&
      s.Get(kPcieLinkGen) < s.Get(kPcieLinkGenMax)) {
    r.Note(fmt::format("PCIe link Gen{} below its maximum Gen{} (normal while idle)", gen,
                       Num(s.Get(kPcieLinkGenMax))));
  }
  const std::optional<double> replays = s.Find(kPcieReplays);
  if (!replays) return;
  const std::optional<double> per_s = in.prev.pcie_replays.Observe(
      in.now, *replays, in.options.rate_window_seconds, in.options.rate_min_span_seconds);
  const std::optional<double> limit = PcieReplayLimitPerMinute(gen, width);
  if (!per_s) {
    r.Note(fmt::format("PCIe replay counter {} (a rate needs a later sample)", Num(*replays)));
    return;
  }
  const double per_min = *per_s * 60;
  if (!limit) {
    r.Note(
        fmt::format("PCIe replays {:.1f}/min (no limit known for Gen{} x{})", per_min, gen, width));
    return;
  }
  std::string line =
      fmt::format("PCIe replays {:.1f}/min, limit {}/min (Gen{} x{}: ceil({} x {}))", per_min,
                  Num(*limit), gen, width, Num(*PcieReplayRatePerLane(gen)), width);
  if (per_min > *limit) {
    r.Raise(Verdict::kWarn, std::move(line),
            "A marginal PCIe link: reseat the GPU, check the riser and slot; drain if it persists "
            "or XID 32/79 follow.");
  } else {
    r.Note(std::move(line));
  }
}

namespace {

// Updates a cumulative per-link counter and says whether it grew recently.
void JudgeLinkCounter(const GpuInput& in, CheckResult& r, HealthState::LinkCounter& c, double value,
                      unsigned link, std::string_view what) {
  if (c.last && value > *c.last) {
    c.last_increase_time = in.now;
    c.last_increase = static_cast<uint64_t>(value - *c.last);
  }
  c.last = value;
  const double since = in.now - c.last_increase_time;
  if (since <= in.options.recent_error_seconds) {
    r.Raise(Verdict::kFail,
            fmt::format("NVLink {}: {} errors +{} {} s ago (any is critical), {} in total",
                        LinkName(link), what, c.last_increase, Num(std::round(since)), Num(value)),
            "Reset the GPU; if NVLink errors recur after the reset, drain the node and RMA "
            "(XID 74).");
  } else if (value > 0) {
    r.Note(fmt::format("NVLink {}: {} {} errors in total, none recently", LinkName(link),
                       Num(value), what));
  }
}

// A link that is not up is down when it was up since the GPU came up (it went
// down on a running GPU), or when it is still not up past the training time
// after the GPU came up (it failed to train); before that it is training, as
// after every planned reboot, driver load or GPU reset. Returns whether it is
// down.
bool JudgeLinkState(const GpuInput& in, CheckResult& r, const NvLinkLink& l,
                    HealthState::NvLink& prev) {
  if (l.active) {
    prev.seen_active = true;
    return false;
  }
  constexpr std::string_view kAdvice =
      "Reset the GPU; check the NVLink bridge or NVSwitch (Fabric Manager).";
  if (prev.seen_active) {
    r.Raise(Verdict::kWarn, fmt::format("NVLink {} went down (was active)", LinkName(l.link)),
            std::string(kAdvice));
    return true;
  }
  const double up_for = in.now - in.prev.up_since.value_or(in.now);
  const double training = in.options.nvlink_training_seconds;
  if (up_for >= training) {
    r.Raise(
        Verdict::kWarn,
        fmt::format("NVLink {} stayed down {} s after the GPU came up (links train within {} s)",
                    LinkName(l.link), Num(std::round(up_for)), Num(training)),
        std::string(kAdvice));
    return true;
  }
  r.Note(fmt::format("NVLink {} training: not up {} s after the GPU came up (down after {} s)",
                     LinkName(l.link), Num(std::round(up_for)), Num(training)));
  return false;
}

void JudgeLink(const GpuInput& in, CheckResult& r, const NvLinkLink& l, GpuHealth* out) {
  HealthState::NvLink& prev = in.prev.nvlinks[l.link];
  if (l.link != kAllLinks) {
    const bool down = JudgeLinkState(in, r, l, prev);
    if (!l.active) out->nvlinks_not_up.emplace_back(l.link, down);
  }
  if (l.crc_flit || l.crc_data) {
    const double crc = static_cast<double>(l.crc_flit.value_or(0) + l.crc_data.value_or(0));
    const std::optional<double> rate = prev.crc.Observe(in.now, crc, in.options.rate_window_seconds,
                                                        in.options.rate_min_span_seconds);
    if (rate && *rate >= in.options.nvlink_crc_warn_per_second) {
      r.Raise(Verdict::kWarn,
              fmt::format("NVLink {}: CRC errors {:.1f}/s >= {}/s", LinkName(l.link), *rate,
                          Num(in.options.nvlink_crc_warn_per_second)),
              "Watch the link; reset the GPU at the next window; replace the bridge/cable or RMA "
              "if it persists.");
    }
  }
  if (l.replay) {
    JudgeLinkCounter(in, r, prev.replay, static_cast<double>(*l.replay), l.link, "replay");
  }
  if (l.recovery) {
    JudgeLinkCounter(in, r, prev.recovery, static_cast<double>(*l.recovery), l.link, "recovery");
  }
}

}  // namespace

void CheckNvlink(const GpuInput& in, CheckResult& r, GpuHealth* out) {
  const GpuSample& s = in.sample;
  if (!in.prev.up_since) {  // first read, or back after lost: links train from now
    in.prev.up_since = in.now;
    for (auto& [link, l] : in.prev.nvlinks) l.seen_active = false;
  }
  out->up_since = *in.prev.up_since;
  std::vector<NvLinkLink> totals;
  const std::vector<NvLinkLink>* links = &s.nvlink;  // read every cycle: not copied
  if (links->empty()) {  // totals over all links, when per-link reads are absent
    using enum Metric;
    if (!AnyPresent(s, {kNvLinkCrcFlitErrors, kNvLinkCrcDataErrors, kNvLinkReplayErrors,
                        kNvLinkRecoveryErrors})) {
      return;
    }
    NvLinkLink all;
    all.link = kAllLinks;
    all.active = true;
    auto get = [&](Metric m) -> std::optional<uint64_t> {
      if (!s.Has(m)) return std::nullopt;
      return static_cast<uint64_t>(s.Get(m));
    };
    all.crc_flit = get(kNvLinkCrcFlitErrors);
    all.crc_data = get(kNvLinkCrcDataErrors);
    all.replay = get(kNvLinkReplayErrors);
    all.recovery = get(kNvLinkRecoveryErrors);
    totals.push_back(all);
    links = &totals;
  }
  r.evaluated = true;
  unsigned active = 0;
  for (const NvLinkLink& l : *links) {
    JudgeLink(in, r, l, out);
    active += l.active;
  }
  if (r.verdict == Verdict::kOk && s.nvlink.size() > 0) {
    r.Note(fmt::format("{} of {} NVLinks active, no recent errors", active, s.nvlink.size()));
  } else if (r.verdict == Verdict::kOk && r.evidence.empty()) {
    r.Note("no recent NVLink errors");
  }
}

void CheckThermal(const GpuInput& in, CheckResult& r) {
  const GpuSample& s = in.sample;
  using enum Metric;
  r.evaluated = AnyPresent(s, {kGpuTemp, kClockReasons});
  if (!r.evaluated) return;
  const uint64_t reasons = ClockReasons(s);
  const double margin = in.options.thermal_margin_celsius;
  const std::optional<double> temp = s.Find(kGpuTemp);
  const std::optional<double> slowdown = s.Find(kSlowdownTemp);
  const std::optional<double> shutdown = s.Find(kShutdownTemp);
  constexpr std::string_view kCooling =
      "Check the cooling: fans, airflow, inlet temperature, heatsink; drain the GPU if it "
      "persists.";
  const double shutdown_margin = in.options.shutdown_margin_celsius;
  if (temp && shutdown && *temp >= *shutdown - shutdown_margin) {
    r.Raise(Verdict::kFail,
            fmt::format("GPU temperature {} C within {} C of the shutdown threshold {} C",
                        Num(*temp), Num(shutdown_margin), Num(*shutdown)),
            "Drain the GPU now: it powers off at the shutdown threshold. Then fix the cooling.");
  }
  if (reasons & kReasonHwThermal) {
    r.Raise(Verdict::kWarn, "HW thermal slowdown active: the GPU cut its clocks to cool down",
            kCooling);
  }
  if (reasons & kReasonSwThermal) {
    r.Raise(Verdict::kWarn, "SW thermal slowdown active: the driver lowered the clocks", kCooling);
  }
  if (temp && slowdown && *temp >= *slowdown - margin) {
    r.Raise(Verdict::kWarn,
            fmt::format("GPU temperature {} C, slowdown threshold {} C (warn at >= {} C)",
                        Num(*temp), Num(*slowdown), Num(*slowdown - margin)),
            kCooling);
  } else if (temp) {
    r.Note(slowdown ? fmt::format("GPU temperature {} C, slowdown threshold {} C", Num(*temp),
                                  Num(*slowdown))
                    : fmt::format("GPU temperature {} C", Num(*temp)));
  }
  const std::optional<double> mem = s.Find(kMemoryTemp);
  const std::optional<double> mem_max = s.Find(kMemoryMaxTemp);
  if (mem && mem_max && *mem >= *mem_max) {
    r.Raise(Verdict::kWarn,
            fmt::format("memory temperature {} C >= its maximum operating {} C", Num(*mem),
                        Num(*mem_max)),
            kCooling);
  }
  if (auto secs = s.Find(kThrottleHwThermal); secs && *secs > 0) {
    r.Note(fmt::format("HW thermal slowdown for {:.1f} s since start", *secs));
  }
}

void CheckPower(const GpuInput& in, CheckResult& r) {
  const GpuSample& s = in.sample;
  using enum Metric;
  r.evaluated = AnyPresent(s, {kPowerUsage, kClockReasons});
  if (!r.evaluated) return;
  const uint64_t reasons = ClockReasons(s);
  if (reasons & kReasonHwPowerBrake) {
    r.Raise(Verdict::kWarn,
            "HW power brake active: the board or system asserted the power brake signal",
            "Check the node's power supplies and the BMC event log; drain the GPU if it persists.");
  } else if ((reasons & kReasonHwSlowdown) && !(reasons & kReasonHwThermal)) {
    r.Raise(Verdict::kWarn, "HW slowdown active (external power or thermal signal)",
            "Check the node's power supplies, the BMC event log and the cooling.");
  }
  const std::optional<double> watts = s.Find(kPowerUsage);
  const std::optional<double> limit = s.Find(kPowerLimit);
  if (watts) {
    r.Note(limit ? fmt::format("power draw {:.1f} W, limit {} W", *watts, Num(*limit))
                 : fmt::format("power draw {:.1f} W", *watts));
  }
  if (auto secs = s.Find(kThrottleHwPowerBrake); secs && *secs > 0) {
    r.Note(fmt::format("HW power brake for {:.1f} s since start", *secs));
  }
}

}  // namespace gpuscope::health::internal
