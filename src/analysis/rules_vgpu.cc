// Rules of a vGPU host board: its time-slicing scheduler's contention. Each
// virtual GPU's own activity verdicts (idle, idle-held, compute-bound) are the
// activity rules over its own window (report.cc).
#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

std::string_view PolicyName(std::optional<double> policy) {
  switch (policy ? static_cast<int>(*policy) : 0) {
    case 1:
      return "best_effort";
    case 2:
      return "equal_share";
    case 3:
      return "fixed_share";
    default:
      return "unknown";
  }
}

}  // namespace

std::optional<Finding> DetectVgpuContention(const Signals& s, const DiagnoseOptions& o) {
  if (!s.vgpu_wait || !s.vgpu_runlists) return std::nullopt;
  if (s.vgpu_runlists->mean < kVgpuMinRunlists.value || s.vgpu_wait->mean < kVgpuWaitHigh.value) {
    return std::nullopt;
  }
  FindingBuilder b(FindingKind::kVgpuContention, s, o);
  b.Uses(Metric::kVgpuSchedulerWait);
  b.Uses(Metric::kVgpuSchedulerRunlists);
  b.AtLeast("vgpu_wait_mean", s.vgpu_wait->mean, kVgpuWaitHigh.value, 0.25, "ratio");
  b.AtLeast("vgpu_busy_runlists", s.vgpu_runlists->mean, kVgpuMinRunlists.value, 1, "count");
  if (s.vgpu_policy) b.Note("vgpu_scheduler_policy", *s.vgpu_policy, "count");
  if (s.vgpu_timeslice_s) b.Note("vgpu_timeslice", *s.vgpu_timeslice_s * 1e3, "ms");
  std::string slice =
      s.vgpu_timeslice_s ? fmt::format(", {:.3g} ms slices", *s.vgpu_timeslice_s * 1e3) : "";
  return b.Build(fmt::format(
      "{:.0f} virtual GPUs take turns on the board and wait {} of their working time for their "
      "turn ({} scheduler{})",
      s.vgpu_runlists->mean, Pct(s.vgpu_wait->mean), PolicyName(s.vgpu_policy), slice));
}

}  // namespace gpuscope::analysis
