#include "base/cpus.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <thread>

#include "base/config_file.h"
#include "base/text.h"

namespace gpuscope::base {
namespace {

constexpr std::size_t kMaxSmallFileBytes = 4096;

// "QUOTA PERIOD" in microseconds, or "max PERIOD": the CPUs it allows.
std::optional<double> ParseCpuMax(std::string_view text) {
  text = Trim(text);
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const std::string_view quota_text = text.substr(0, space);
  const std::string_view period_text = Trim(text.substr(space + 1));
  long quota = 0;
  long period = 0;
  if (std::from_chars(quota_text.data(), quota_text.data() + quota_text.size(), quota).ec !=
          std::errc{} ||
      std::from_chars(period_text.data(), period_text.data() + period_text.size(), period).ec !=
          std::errc{} ||
      quota <= 0 || period <= 0) {
    return std::nullopt;  // "max" (no limit) or unreadable
  }
  return static_cast<double>(quota) / static_cast<double>(period);
}

}  // namespace

std::optional<double> CgroupCpuQuota(std::string_view cgroup_root,
                                     std::string_view proc_self_cgroup) {
  // cgroup v2 has one line, "0::/path"; v1 hierarchies have other numbers.
  std::string path;
  while (!proc_self_cgroup.empty()) {
    const std::string_view line = PopLine(proc_self_cgroup);
    if (line.starts_with("0::/")) path = std::string(line.substr(3));
  }
  if (path.empty() || path.find("/..") != std::string::npos) return std::nullopt;
  std::optional<double> tightest;
  for (;;) {
    Result<std::string> text =
        ReadRegularFile(Concat({cgroup_root, path == "/" ? "" : path, "/cpu.max"}), "cgroup file",
                        kMaxSmallFileBytes);
    if (text.ok()) {
      if (std::optional<double> quota = ParseCpuMax(*text)) {
        tightest = tightest ? std::min(*tightest, *quota) : *quota;
      }
    }
    if (path == "/") return tightest;
    path.erase(std::max<std::size_t>(path.rfind('/'), 1));
  }
}

unsigned UsableCpus() {
  unsigned cpus = 0;
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) cpus = CPU_COUNT(&set);
  if (cpus == 0) cpus = std::max(1u, std::thread::hardware_concurrency());
  Result<std::string> self =
      ReadRegularFile("/proc/self/cgroup", "cgroup list", kMaxSmallFileBytes);
  if (self.ok()) {
    if (std::optional<double> quota = CgroupCpuQuota("/sys/fs/cgroup", *self)) {
      cpus = std::min(cpus, std::max(1u, static_cast<unsigned>(std::ceil(*quota))));
    }
  }
  return cpus;
}

}  // namespace gpuscope::base
