#include "attach.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpuscope::sim {
namespace {

// A positive number from "<key>=<value>", or an error naming the word.
Result<double> Number(const std::string& word, const std::string& value, double max) {
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || !(v >= 0 && v <= max)) {
    return Status::InvalidArgument("bad '" + word + "': a number from 0 to " +
                                   std::to_string(static_cast<long>(max)));
  }
  return v;
}

Result<unsigned> Pid(const std::string& word) {
  char* end = nullptr;
  const unsigned long pid = std::strtoul(word.c_str(), &end, 10);
  if (word.empty() || *end != '\0' || pid == 0 || pid > 0x3fffffff) {
    return Status::InvalidArgument("bad pid '" + word + "'");
  }
  return static_cast<unsigned>(pid);
}

// What NVML names a process: its executable's path as started (argv[0]).
std::string CommandName(unsigned pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cmdline", std::ios::binary);
  std::string first;
  std::getline(in, first, '\0');
  return first.empty() ? "process " + std::to_string(pid) : first;
}

}  // namespace

Status AttachCommand(Sim& sim, const std::vector<std::string>& w) {
  if (w.size() < 3) {
    return Status::InvalidArgument(
        "usage: attach <gpu>[/<mig index>] <pid> [memory=<GiB>] [sm=<0..1>] [name=<text>]");
  }
  const std::string& target = w[1];
  const std::size_t slash = target.find('/');
  char* end = nullptr;
  const std::string gpu_word = target.substr(0, slash);
  const unsigned long g = std::strtoul(gpu_word.c_str(), &end, 10);
  if (gpu_word.empty() || *end != '\0' || g >= sim.gpu_count()) {
    return Status::InvalidArgument("bad GPU '" + gpu_word + "'");
  }
  const GpuSpec& spec = sim.spec(static_cast<unsigned>(g));
  ProcessSpec p;
  if (slash != std::string::npos) {
    const std::string mig = target.substr(slash + 1);
    const unsigned long m = std::strtoul(mig.c_str(), &end, 10);
    if (mig.empty() || *end != '\0' || !spec.mig_enabled || m >= spec.mig_instances.size()) {
      return Status::InvalidArgument("GPU " + gpu_word + " has no MIG instance '" + mig + "'");
    }
    p.gpu_instance = static_cast<int>(m);
  }
  Result<unsigned> pid = Pid(w[2]);
  if (!pid.ok()) return pid.status();
  p.pid = *pid;
  p.sm_share = 0;
  for (std::size_t i = 3; i < w.size(); ++i) {
    const std::size_t eq = w[i].find('=');
    const std::string key = w[i].substr(0, eq),
                      value = eq == std::string::npos ? "" : w[i].substr(eq + 1);
    if (key == "memory") {
      Result<double> gib = Number(w[i], value, 1 << 20);
      if (!gib.ok()) return gib.status();
      p.used_memory_gib = *gib;
    } else if (key == "sm") {
      Result<double> sm = Number(w[i], value, 1);
      if (!sm.ok()) return sm.status();
      p.sm_share = *sm;
    } else if (key == "name" && !value.empty()) {
      p.name = value;
    } else {
      return Status::InvalidArgument("unknown attach word '" + w[i] + "'");
    }
  }
  if (!ProcessAlive(p.pid)) {
    return Status::NotFound("no live process " + std::to_string(p.pid));
  }
  if (p.name.empty()) p.name = CommandName(p.pid);
  sim.Attach(static_cast<unsigned>(g), std::move(p));
  return Status::Ok();
}

Status DetachCommand(Sim& sim, const std::vector<std::string>& w) {
  if (w.size() != 2) return Status::InvalidArgument("usage: detach <pid>");
  Result<unsigned> pid = Pid(w[1]);
  if (!pid.ok()) return pid.status();
  sim.Detach(*pid);
  return Status::Ok();
}

bool ProcessAlive(unsigned pid, const std::string& proc_root) {
  std::ifstream in(proc_root + "/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return false;
  // "pid (comm) S ...": the state follows the last ')' (comm may hold one).
  const std::size_t close = stat.rfind(')');
  if (close == std::string::npos || close + 2 >= stat.size()) return false;
  const char state = stat[close + 2];
  return state != 'Z' && state != 'X' && state != 'x';
}

void ReapExitedAttachments(Sim& sim) {
  for (unsigned pid : sim.AttachedPids()) {
    if (!ProcessAlive(pid)) sim.Detach(pid);
  }
}

void Sim::Attach(unsigned g, ProcessSpec p) {
  const double now = Now();
  Gpu& gpu = *gpus_[g];
  std::lock_guard lock(gpu.mu);
  // Steps before now are computed without it: it starts at the next step.
  AdvanceLocked(g, gpu, std::max<int64_t>(0, StepAt(now)));
  p.start = std::max(0.0, now);
  p.end = kForever;
  gpu.attached.push_back(std::move(p));
}

void Sim::Detach(unsigned pid) {
  const double now = Now();
  for (unsigned g = 0; g < gpu_count(); ++g) {
    Gpu& gpu = *gpus_[g];
    std::lock_guard lock(gpu.mu);
    for (ProcessSpec& p : gpu.attached) {
      if (p.pid == pid && p.end > now) p.end = std::max(p.start, now);
    }
  }
}

std::vector<unsigned> Sim::AttachedPids() const {
  const double now = Now();
  std::vector<unsigned> out;
  for (const auto& gpu : gpus_) {
    std::lock_guard lock(gpu->mu);
    for (const ProcessSpec& p : gpu->attached) {
      if (p.end > now) out.push_back(p.pid);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<ProcessSpec> Sim::Processes(unsigned g) const {
  const Gpu& gpu = *gpus_[g];
  std::vector<ProcessSpec> out = gpu.spec.processes;
  std::lock_guard lock(gpu.mu);
  out.insert(out.end(), gpu.attached.begin(), gpu.attached.end());
  return out;
}

}  // namespace gpuscope::sim
