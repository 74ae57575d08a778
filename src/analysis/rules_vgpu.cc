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

// The actions when the policy already gives each VM a share (the row's action
// is for best effort): the board is full, or the share's cap holds the VMs
// back while the board has idle time.
constexpr std::string_view kBoardFullAction =
    "Every VM already gets its share and the board is full: move a busy VM to a less loaded "
    "board, or use MIG-backed vGPU profiles so each VM has SMs of its own. See runbook "
    "GpuVgpuSchedulerContention.";
constexpr std::string_view kShareCapAction =
    "The scheduler holds each VM to its share while the board has idle time: switch the board "
    "to the best_effort scheduler so busy VMs use the idle slices (at the cost of steady per-VM "
    "speed), or give the busy VMs larger vGPU profiles. See runbook GpuVgpuSchedulerContention.";

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
  const std::string policy = fmt::format(
      "{} scheduler{}", PolicyName(s.vgpu_policy),
      s.vgpu_timeslice_s ? fmt::format(", {:.3g} ms slices", *s.vgpu_timeslice_s * 1e3) : "");
  const bool shares = s.vgpu_policy && (*s.vgpu_policy == 2 || *s.vgpu_policy == 3);
  if (shares && s.util.n > 0 && s.util.mean < kVgpuBoardBusy.value) {
    // Equal or fixed share: a busy VM waits on its cap even on an idle board.
    b.Uses(Metric::kGpuUtil);
    b.Below("board_util_mean", s.util.mean, kVgpuBoardBusy.value, 0.5, "ratio");
    return b.Build(
        fmt::format("{:.0f} virtual GPUs wait {} of their working time on their "
                    "share's cap while the board is busy only {} ({})",
                    s.vgpu_runlists->mean, Pct(s.vgpu_wait->mean), Pct(s.util.mean), policy),
        kShareCapAction);
  }
  std::string verdict = fmt::format(
      "{:.0f} virtual GPUs take turns on the board and wait {} of their working time for their "
      "turn ({})",
      s.vgpu_runlists->mean, Pct(s.vgpu_wait->mean), policy);
  if (!shares) return b.Build(verdict);
  if (s.util.n > 0) {
    b.Uses(Metric::kGpuUtil);
    b.AtLeast("board_util_mean", s.util.mean, kVgpuBoardBusy.value, 0.15, "ratio");
  }
  return b.Build(verdict, kBoardFullAction);
}

}  // namespace gpuscope::analysis
