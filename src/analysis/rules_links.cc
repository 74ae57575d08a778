// Rules on the interconnect: PCIe or NVLink near capacity while the SMs wait,
// and a PCIe link trained below its maximum.
#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

// The interconnect rule's action when the saturated link is NVLink (its row's
// action is for PCIe).
constexpr std::string_view kNvLinkAction =
    "Cut GPU-GPU traffic: gradient compression or bucketing, overlap communication with compute, "
    "a parallelism layout that keeps heavy traffic on NVLink pairs.";

// The busiest link that counts as saturated, or nullptr.
const LinkSignals* SaturatedLink(const Signals& s) {
  const LinkSignals* best = nullptr;
  for (const std::optional<LinkSignals>* l : {&s.pcie, &s.nvlink}) {
    if (!*l) continue;
    bool saturated = (*l)->mean_ratio >= kLinkSaturatedMean.value ||
                     (*l)->busy_share >= kLinkSaturatedShare.value;
    if (saturated && (!best || (*l)->mean_ratio > best->mean_ratio)) best = &**l;
  }
  return best;
}

// Whether the SMs wait (GPM SM activity, else utilization or gaps); records
// the evidence and puts the words in `wait`.
bool SmWaiting(const Signals& s, FindingBuilder& b, std::string& wait) {
  if (s.sm_active) {
    if (s.sm_active->mean > kInterconnectSmMax.value) return false;
    b.Uses(Metric::kSmActive);
    b.AtMost("sm_active_mean", s.sm_active->mean, kInterconnectSmMax.value, 0.3, "ratio");
    wait = fmt::format("SM active only {}", Pct(s.sm_active->mean));
    return true;
  }
  if (s.util.mean > kInterconnectUtilMax.value && s.gap_share < kInterconnectGapShare.value)
    return false;
  b.Fallback();
  b.Uses(Metric::kGpuUtil);
  if (s.util.mean <= kInterconnectUtilMax.value) {
    b.AtMost("util_mean", s.util.mean, kInterconnectUtilMax.value, 0.3, "ratio");
  } else {
    b.AtLeast("gap_share", s.gap_share, kInterconnectGapShare.value, 0.2, "ratio");
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
  b.Uses(pcie ? Metric::kPcieRxBytesRate : Metric::kNvLinkRxBytesRate);
  if (link->mean_ratio >= kLinkSaturatedMean.value) {
    b.AtLeast("link_mean_ratio", link->mean_ratio, kLinkSaturatedMean.value, 0.2, "ratio");
  } else {
    b.AtLeast("link_busy_share", link->busy_share, kLinkSaturatedShare.value, 0.4, "ratio");
  }
  b.Note("link_mean", link->mean_bps, "bytes/s");
  b.Note("link_capacity", link->capacity_bps, "bytes/s");
  std::string wait;
  if (!SmWaiting(s, b, wait)) return std::nullopt;
  std::string degraded = pcie ? LinkShape(s) : "";
  std::string detail =
      fmt::format("{} at {} of {}{} ({}{}), {}: the GPU waits for data", name, Rate(link->mean_bps),
                  Rate(link->capacity_bps), degraded, Pct(link->mean_ratio),
                  s.recent ? " over " + s.span_name : "", wait);
  return pcie ? b.Build(detail) : b.Build(detail, kNvLinkAction);
}

std::optional<Finding> DetectPcieDegraded(const Signals& s, const DiagnoseOptions& o) {
  if (!s.pcie_gen || !s.pcie_gen_max || !s.pcie_width || !s.pcie_width_max) return std::nullopt;
  bool narrow = *s.pcie_width < *s.pcie_width_max;
  bool slow =
      *s.pcie_gen < *s.pcie_gen_max && s.util.n > 0 && s.util.mean >= kPcieGenCheckUtil.value;
  if (!narrow && !slow) return std::nullopt;
  FindingBuilder b(FindingKind::kPcieDegraded, s, o);
  b.Uses(Metric::kPcieLinkGen), b.Uses(Metric::kPcieLinkWidth);
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
  return b.Build(fmt::format("Gen{} x{} of Gen{:.0f} x{:.0f} ({} of {} per direction){}", gen,
                             width, *s.pcie_gen_max, *s.pcie_width_max, Rate(now), Rate(max), use));
}

}  // namespace gpuscope::analysis
