// Rules on the interconnect: PCIe or NVLink near capacity while the SMs wait,
// and a PCIe link trained below its maximum.
#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

// Interconnect-bound: a link's mean at least 70% of capacity, or at least 80%
// of capacity for half the window, while SMs wait: SM active at most 60%
// (GPM), else utilization at most 85% or gaps at least 10% of the window.
constexpr double kLinkSaturatedMean = 0.70;
constexpr double kLinkSaturatedShare = 0.5;
constexpr double kInterconnectSmMax = 0.60;
constexpr double kInterconnectUtilMax = 0.85;
constexpr double kInterconnectGapShare = 0.10;

// PCIe generation drops at idle for power saving; below this mean utilization
// a lower generation is not a fault (a narrower width always is).
constexpr double kPcieGenCheckUtil = 0.2;

// The busiest link that counts as saturated, or nullptr.
const LinkSignals* SaturatedLink(const Signals& s) {
  const LinkSignals* best = nullptr;
  for (const std::optional<LinkSignals>* l : {&s.pcie, &s.nvlink}) {
    if (!*l) continue;
    bool saturated =
        (*l)->mean_ratio >= kLinkSaturatedMean || (*l)->busy_share >= kLinkSaturatedShare;
    if (saturated && (!best || (*l)->mean_ratio > best->mean_ratio)) best = &**l;
  }
  return best;
}

// Whether the SMs wait (GPM SM activity, else utilization or gaps); records
// the evidence and puts the words in `wait`.
bool SmWaiting(const Signals& s, FindingBuilder& b, std::string& wait) {
  if (s.sm_active) {
    if (s.sm_active->mean > kInterconnectSmMax) return false;
    b.Uses("sm_active");
    b.AtMost("sm_active_mean", s.sm_active->mean, kInterconnectSmMax, 0.3, "ratio");
    wait = fmt::format("SM active only {}", Pct(s.sm_active->mean));
    return true;
  }
  if (s.util.mean > kInterconnectUtilMax && s.gap_share < kInterconnectGapShare) return false;
  b.Fallback();
  b.Uses("gpu_util");
  if (s.util.mean <= kInterconnectUtilMax) {
    b.AtMost("util_mean", s.util.mean, kInterconnectUtilMax, 0.3, "ratio");
  } else {
    b.AtLeast("gap_share", s.gap_share, kInterconnectGapShare, 0.2, "ratio");
  }
  wait = fmt::format("utilization {}", Pct(s.util.mean));
  return true;
}

// " (Gen3 x8, max Gen5 x16)" or "".
std::string LinkShape(const Signals& s) {
  if (!s.pcie_gen || !s.pcie_width) return "";
  std::string out = fmt::format(" (Gen{:.0f} x{:.0f}", *s.pcie_gen, *s.pcie_width);
  if (s.pcie_gen_max && s.pcie_width_max) {
    out += fmt::format(", max Gen{:.0f} x{:.0f}", *s.pcie_gen_max, *s.pcie_width_max);
  }
  return out + ")";
}

}  // namespace

std::optional<Finding> DetectInterconnect(const Signals& s, const DiagnoseOptions& o) {
  const LinkSignals* link = SaturatedLink(s);
  if (!link || s.util.n == 0) return std::nullopt;
  FindingBuilder b(FindingKind::kInterconnect, s, o);
  bool pcie = s.pcie && link == &*s.pcie;
  const char* name = pcie ? "PCIe" : "NVLink";
  b.Uses(pcie ? "pcie_rx_rate" : "nvlink_rx_rate");
  if (link->mean_ratio >= kLinkSaturatedMean) {
    b.AtLeast("link_mean_ratio", link->mean_ratio, kLinkSaturatedMean, 0.2, "ratio");
  } else {
    b.AtLeast("link_busy_share", link->busy_share, kLinkSaturatedShare, 0.4, "ratio");
  }
  b.Note("link_mean", link->mean_bps, "bytes/s");
  b.Note("link_capacity", link->capacity_bps, "bytes/s");
  std::string wait;
  if (!SmWaiting(s, b, wait)) return std::nullopt;
  std::string degraded = pcie ? LinkShape(s) : "";
  return b.Build(
      fmt::format("interconnect-bound: {} at {} of {}{} ({}{}), {}: the GPU waits for data", name,
                  Rate(link->mean_bps), Rate(link->capacity_bps), degraded, Pct(link->mean_ratio),
                  s.recent ? " over " + s.span_name : "", wait),
      pcie ? "Cut host-device traffic: pinned memory and larger transfers, keep data resident "
             "on the GPU, overlap copies with compute; fix a degraded link (reseat, slot, BIOS)."
           : "Cut GPU-GPU traffic: gradient compression or bucketing, overlap communication "
             "with compute, a parallelism layout that keeps heavy traffic on NVLink pairs.");
}

std::optional<Finding> DetectPcieDegraded(const Signals& s, const DiagnoseOptions& o) {
  if (!s.pcie_gen || !s.pcie_gen_max || !s.pcie_width || !s.pcie_width_max) return std::nullopt;
  bool narrow = *s.pcie_width < *s.pcie_width_max;
  bool slow = *s.pcie_gen < *s.pcie_gen_max && s.util.n > 0 && s.util.mean >= kPcieGenCheckUtil;
  if (!narrow && !slow) return std::nullopt;
  FindingBuilder b(FindingKind::kPcieDegraded, s, o);
  b.Uses("pcie_link_gen"), b.Uses("pcie_link_width");
  if (narrow) {
    b.Below("pcie_link_width", *s.pcie_width, *s.pcie_width_max, *s.pcie_width_max / 2, "lanes");
  }
  if (slow) b.Below("pcie_link_gen", *s.pcie_gen, *s.pcie_gen_max, 1, "generation");
  unsigned gen = static_cast<unsigned>(*s.pcie_gen), width = static_cast<unsigned>(*s.pcie_width);
  double now = PcieCapacityBytesPerSecond(gen, width);
  double max = PcieCapacityBytesPerSecond(static_cast<unsigned>(*s.pcie_gen_max),
                                          static_cast<unsigned>(*s.pcie_width_max));
  b.Note("pcie_capacity", now, "bytes/s");
  b.Note("pcie_capacity_max", max, "bytes/s");
  std::string use = s.pcie ? fmt::format(", carrying {} ({} of it)", Rate(s.pcie->mean_bps),
                                         Pct(s.pcie->mean_ratio))
                           : std::string();
  return b.Build(
      fmt::format("PCIe link degraded: Gen{} x{} of Gen{:.0f} x{:.0f} ({} of {} per "
                  "direction){}",
                  gen, width, *s.pcie_gen_max, *s.pcie_width_max, Rate(now), Rate(max), use),
      "Reseat the card or riser, check the slot and BIOS PCIe settings; rising "
      "replay counts point at a marginal link. See runbook GpuPcieLinkDegraded.");
}

}  // namespace gpuscope::analysis
