#include "remediate/triggers.h"

#include <fmt/format.h>

namespace gpuscope::remediate {
namespace {

constexpr std::array<std::pair<unsigned, Finding>, 6> kXidFindings = {{
    {79, Finding::kXid79},
    {48, Finding::kXid48},
    {94, Finding::kXid94},
    {95, Finding::kXid95},
    {119, Finding::kXid119},
    {120, Finding::kXid120},
}};

// The comma-separated words of `text`, blanks trimmed, empty ones dropped.
std::vector<std::string_view> Words(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    const std::size_t comma = text.find(',');
    std::string_view word = text.substr(0, comma);
    while (!word.empty() && word.front() == ' ') word.remove_prefix(1);
    while (!word.empty() && word.back() == ' ') word.remove_suffix(1);
    if (!word.empty()) out.push_back(word);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return out;
}

bool Positive(const GpuSample* sample, Metric m) {
  return sample && sample->Find(m).value_or(0) > 0;
}

// A link down that training does not explain (checks_hw.cc): it went down
// after being up, or it is still down past the training time. A link that
// trains after a reboot, driver load or GPU reset is not down.
bool NvlinkWentDown(const health::GpuHealth& gpu) {
  for (const auto& [link, down] : gpu.nvlinks_not_up) {
    if (down) return true;
  }
  for (const std::string& line : gpu.Get(health::Check::kNvlink).evidence) {
    if (line.find("went down") != std::string::npos) return true;
  }
  return false;
}

// A completed fabric registration that cannot carry traffic: it failed, a
// route is unhealthy, or the configuration is wrong. Not started and in
// progress are the states of a booting node, never a trigger.
bool FabricUnusable(const GpuSample* sample) {
  if (!sample || sample->Find(Metric::kFabricState).value_or(0) != 3) return false;
  return sample->Find(Metric::kFabricErrorCode).value_or(0) != 0 ||
         sample->Find(Metric::kFabricRouteUnhealthy).value_or(0) == 1 ||
         sample->Find(Metric::kFabricIncorrectConfig).value_or(1) > 1;
}

// Whether `f` stands on `gpu` this cycle.
bool Stands(Finding f, const health::GpuHealth& gpu, const GpuSample* sample) {
  switch (f) {
    case Finding::kGpuLost:
      return gpu.lost;
    case Finding::kRowRemapFailure:
      return Positive(sample, Metric::kRemappedFailure);
    case Finding::kRowRemapPending:
      return Positive(sample, Metric::kRemappedPending);
    case Finding::kRecoveryReset: {
      const double a = sample ? sample->Find(Metric::kRecoveryAction).value_or(0) : 0;
      return a == 1 || a == 4;  // reset, drain-and-reset
    }
    case Finding::kRecoveryReboot:
      return sample && sample->Find(Metric::kRecoveryAction).value_or(0) == 2;
    case Finding::kNvlinkDown:
      return NvlinkWentDown(gpu);
    case Finding::kFabricUnusable:
      return FabricUnusable(sample);
    default:
      break;
  }
  for (const auto& [code, finding] : kXidFindings) {
    if (finding != f) continue;
    auto it = gpu.xid_window.find(code);
    return it != gpu.xid_window.end() && it->second > 0;
  }
  return false;
}

}  // namespace

FindingSet DefaultFindings() {
  FindingSet out;
  for (const Trigger& t : kTriggers) {
    if (t.on_by_default) out.insert(t.finding);
  }
  return out;
}

Result<FindingSet> ParseFindings(std::string_view text) {
  FindingSet out;
  for (std::string_view word : Words(text)) {
    if (word == "default") {
      FindingSet defaults = DefaultFindings();
      out.insert(defaults.begin(), defaults.end());
      continue;
    }
    bool known = false;
    for (const Trigger& t : kTriggers) {
      if (t.name == word) {
        out.insert(t.finding);
        known = true;
      }
    }
    if (!known) {
      std::string names;
      for (const Trigger& t : kTriggers) names += (names.empty() ? "" : ", ") + std::string(t.name);
      return Status::InvalidArgument(
          fmt::format("unknown finding '{}' (known: default, {})", word, names));
    }
  }
  if (out.empty()) return Status::InvalidArgument("no finding named (use 'default')");
  return out;
}

std::string Fault::Key() const {
  return fmt::format("{}/{}", TriggerOf(finding).name, uuid.empty() ? std::to_string(gpu) : uuid);
}

std::string Fault::Describe() const {
  return fmt::format("{} on GPU {} ({})", TriggerOf(finding).what, gpu, uuid);
}

// The runbooks' address is the build's (cmake/install_share.cmake), as in the alert rules.
std::string Fault::Runbook() const {
  return std::string(GPUSCOPE_RUNBOOK_URL_BASE) + std::string(TriggerOf(finding).runbook);
}

std::vector<Fault> FindFaults(const health::HealthReport& report, const Snapshot& snapshot,
                              const FindingSet& enabled) {
  std::vector<Fault> out;
  for (const health::GpuHealth& gpu : report.gpus) {
    const GpuSample* sample =
        gpu.slot < snapshot.samples.size() ? &snapshot.samples[gpu.slot] : nullptr;
    for (Finding f : enabled) {
      if (Stands(f, gpu, sample)) out.push_back({f, gpu.gpu, gpu.uuid});
    }
  }
  return out;
}

}  // namespace gpuscope::remediate
