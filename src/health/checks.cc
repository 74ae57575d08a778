#include "health/checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>

#include "health/checks_internal.h"
#include "health/xid_catalog.h"

namespace gpuscope::health {

using internal::GpuInput;
using internal::Num;

namespace {

using CheckFn = void (*)(const GpuInput&, CheckResult&, GpuHealth&);

template <void (*F)(const GpuInput&, CheckResult&)>
void Plain(const GpuInput& in, CheckResult& r, GpuHealth& /*h*/) {
  F(in, r);
}

void Driver(const GpuInput& in, CheckResult& r, GpuHealth& h) { internal::CheckDriver(in, r, &h); }
void Nvlink(const GpuInput& in, CheckResult& r, GpuHealth& h) { internal::CheckNvlink(in, r, &h); }

struct CheckDef {
  Check check;
  std::string_view name;  // the `check` label
  CheckFn run;
  bool runs_when_lost;  // false: a lost GPU's values are gone or old, skip it
};

// Every check, in evaluation order: the driver check first, since it finds
// whether the GPU is lost.
constexpr CheckDef kCheckTable[] = {
    {Check::kDriver, "driver", Driver, true},
    {Check::kXid, "xid", Plain<internal::CheckXid>, true},
    {Check::kMemory, "memory", Plain<internal::CheckMemory>, false},
    {Check::kPcie, "pcie", Plain<internal::CheckPcie>, false},
    {Check::kNvlink, "nvlink", Nvlink, false},
    {Check::kThermal, "thermal", Plain<internal::CheckThermal>, false},
    {Check::kPower, "power", Plain<internal::CheckPower>, false},
    {Check::kFabric, "fabric", Plain<internal::CheckFabric>, false},
    {Check::kLicense, "license", Plain<internal::CheckLicense>, false},
};

constexpr bool EveryCheckOnce() {
  for (Check c : kAllChecks) {
    int n = 0;
    for (const CheckDef& def : kCheckTable) n += def.check == c ? 1 : 0;
    if (n != 1) return false;
  }
  return std::size(kCheckTable) == kAllChecks.size() && kCheckTable[0].check == Check::kDriver;
}
static_assert(EveryCheckOnce(), "kCheckTable: each Check once, the driver check first");

}  // namespace

std::string_view CheckName(Check c) {
  for (const CheckDef& def : kCheckTable) {
    if (def.check == c) return def.name;
  }
  return "unknown";
}

std::string_view VerdictName(Verdict v) {
  switch (v) {
    case Verdict::kOk:
      return "ok";
    case Verdict::kWarn:
      return "warn";
    case Verdict::kFail:
      return "fail";
  }
  return "unknown";
}

void CheckResult::Raise(Verdict v, std::string line, std::string_view what_to_do) {
  evidence.push_back(std::move(line));
  if (v > verdict || (v == verdict && action.empty())) {
    verdict = v;
    if (v != Verdict::kOk) action = std::string(what_to_do);
  }
}

namespace internal {

std::string Num(double v) { return fmt::format("{}", v); }

uint64_t ClockReasons(const GpuSample& s) {
  const std::optional<double> bits = s.Find(Metric::kClockReasons);
  return bits && *bits >= 0 ? static_cast<uint64_t>(*bits) : 0;
}

void CheckXid(const GpuInput& in, CheckResult& r) {
  const GpuEvents* ev = in.events;
  if (!ev) return;
  r.evaluated = true;
  const std::map<unsigned, uint64_t> window =
      ev->WindowCounts(in.now - in.options.xid_window_seconds);
  const std::string span = Num(in.options.xid_window_seconds);
  for (const auto& [code, count] : window) {
    const XidInfo info = LookupXid(code);
    const Severity sev = XidSeverity(code, count);
    std::string line = fmt::format("XID {} ({}) x{} in the last {} s: {}", code, info.name, count,
                                   span, SeverityName(sev));
    if (info.application) line += " (usually the application; the GPU stays usable)";
    const Verdict v = sev == Severity::kCritical ? Verdict::kFail
                      : sev == Severity::kWarn   ? Verdict::kWarn
                                                 : Verdict::kOk;
    r.Raise(v, std::move(line), fmt::format("XID {}: {}", code, info.action));
  }
  if (window.empty()) r.Note(fmt::format("no XID in the last {} s", span));
  if (!ev->xid_counts.empty()) {
    std::string totals = "XIDs since start:";
    for (const auto& [code, count] : ev->xid_counts) totals += fmt::format(" {} x{}", code, count);
    r.Note(std::move(totals));
  }
}

void CheckRecoveryAction(const GpuInput& in, CheckResult& r) {
  std::optional<double> action = in.sample.Find(Metric::kRecoveryAction);
  if (!action && in.events && in.events->last_recovery_action) {
    action = static_cast<double>(*in.events->last_recovery_action);
  }
  if (!action) return;
  const auto code = static_cast<int>(*action);
  switch (code) {
    case 0:
      r.Note("GPU recovery action: none");
      return;
    case 1:
      r.Raise(Verdict::kFail, "GPU recovery action 1: GPU reset required",
              "Stop the GPU's processes and reset it (nvidia-smi -r).");
      return;
    case 2:
      r.Raise(Verdict::kFail, "GPU recovery action 2: node reboot required",
              "Drain the node and reboot it.");
      return;
    case 3:
      r.Raise(Verdict::kWarn, "GPU recovery action 3: drain peer-to-peer",
              "Stop the processes using peer-to-peer (NVLink/P2P), then re-check.");
      return;
    case 4:
      r.Raise(Verdict::kFail, "GPU recovery action 4: drain and reset (reduced capacity)",
              "Schedule nothing new on the GPU; reset it once drained.");
      return;
    default:
      r.Raise(Verdict::kWarn, fmt::format("GPU recovery action {} (unknown value)", code),
              "Check nvidia-smi -q for the recovery action the driver asks for.");
  }
}

void CheckDriver(const GpuInput& in, CheckResult& r, GpuHealth* out) {
  r.evaluated = true;
  const GpuSample& s = in.sample;
  const GpuEvents* ev = in.events;
  const bool unavailable_event =
      ev && ev->unavailable_events > 0 && ev->last_unavailable_time > s.sampled_at;
  if (s.state == GpuState::kLost || unavailable_event) {
    out->lost = true;
    in.prev.up_since.reset();  // back from lost: a reset; its links train again
    const std::string why = s.state == GpuState::kLost
                                ? (s.state_reason.empty() ? "GPU is lost" : s.state_reason)
                                : "NVML reported the GPU unavailable (GpuUnavailableError event)";
    r.Raise(Verdict::kFail, "GPU lost: " + why,
            "Drain the node and reboot it (XID 79: fallen off the bus); RMA if it recurs.");
  }
  const double age = s.sampled_at > 0 ? in.now - s.sampled_at : 0;
  if (s.state == GpuState::kStale ||
      (s.state == GpuState::kOk && s.sampled_at > 0 && age > in.options.stale_after_seconds)) {
    out->stale = true;
    r.Raise(Verdict::kWarn,
            fmt::format("collector stale: last good read {} s ago (stale after {} s){}",
                        Num(std::round(age)), Num(in.options.stale_after_seconds),
                        s.state_reason.empty() ? "" : ": " + s.state_reason),
            "An NVML call hangs or fails: check nvidia-smi, the driver and the kernel log; "
            "restart gpuscope if it persists.");
  }
  if (s.state == GpuState::kError) {
    r.Raise(Verdict::kWarn, "last read failed: " + s.state_reason,
            "Check the driver (nvidia-smi) and the kernel log (dmesg).");
  }
  if (!out->lost) CheckRecoveryAction(in, r);
  if (r.evidence.empty()) r.Note("GPU answers NVML");
}

}  // namespace internal

std::map<unsigned, std::size_t> WholeGpuSlots(const Snapshot& snapshot) {
  std::map<unsigned, std::size_t> chosen;
  const std::size_t n = std::min(snapshot.gpus.size(), snapshot.samples.size());
  for (std::size_t i = 0; i < n; ++i) {
    const bool mig = snapshot.gpus[i].gpu_instance_id.has_value();
    auto it = chosen.find(snapshot.gpus[i].index);
    if (it == chosen.end()) {
      chosen[snapshot.gpus[i].index] = i;
    } else if (snapshot.gpus[it->second].gpu_instance_id.has_value() && !mig) {
      it->second = i;
    }
  }
  return chosen;
}

namespace {

GpuHealth EvaluateGpu(std::size_t slot, const GpuInfo& info, const GpuSample& sample,
                      const EventState& events, HealthState& state, double now,
                      const HealthOptions& options) {
  GpuHealth h;
  h.slot = slot;
  h.gpu = info.index;
  h.uuid = info.uuid;
  h.pci_bus_id = info.pci_bus_id;
  h.model = info.name;
  h.device = "nvidia" + std::to_string(info.minor_number);
  for (std::size_t i = 0; i < kAllChecks.size(); ++i) h.checks[i].check = kAllChecks[i];
  const GpuEvents* ev = events.Find(info.index);
  const GpuInput in{info, sample, ev, state.For(info.index), now, options};
  for (const CheckDef& def : kCheckTable) {
    if (def.runs_when_lost || !h.lost) def.run(in, h.Get(def.check), h);
  }
  for (const CheckResult& c : h.checks) {
    if (c.evaluated) h.verdict = std::max(h.verdict, c.verdict);
  }
  if (ev) {
    h.xid_totals = ev->xid_counts;
    h.xid_window = ev->WindowCounts(now - options.xid_window_seconds);
    h.last_xid = ev->last_xid;
  }
  return h;
}

}  // namespace

HealthReport Evaluate(const Snapshot& snapshot, const EventState& events, HealthState& state,
                      double now, const HealthOptions& options) {
  HealthReport report;
  report.timestamp = now;
  report.hostname = snapshot.system.hostname;
  report.xid_window_seconds = options.xid_window_seconds;
  report.nvml_up = snapshot.nvml_up;
  report.nvml_error = snapshot.nvml_error;
  report.events_running = events.running;
  if (!snapshot.nvml_up) report.verdict = Verdict::kFail;
  for (const auto& [index, i] : WholeGpuSlots(snapshot)) {
    report.gpus.push_back(
        EvaluateGpu(i, snapshot.gpus[i], snapshot.samples[i], events, state, now, options));
    if (snapshot.attribution) {
      report.gpus.back().holders = snapshot.attribution->Of(snapshot.gpus[i]);
      report.gpus.back().processes = snapshot.attribution->Holdings(snapshot.samples[i].processes);
    }
    report.verdict = std::max(report.verdict, report.gpus.back().verdict);
  }
  return report;
}

}  // namespace gpuscope::health
