#include "cli/summary.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ostream>

#include "base/text.h"
#include "cli/agent_source.h"
#include "cli/node.h"
#include "cli/options.h"
#include "cli/query_format.h"
#include "gpuscope/attribution.h"
#include "gpuscope/version.h"

namespace gpuscope::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string Pad(std::string s, std::size_t width, bool right = false) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

// "56C", "700W", "1234MiB", "98%", or "N/A" when the value is absent.
std::string Number(const GpuSample& s, Metric m, const char* suffix, double divisor = 1) {
  std::optional<double> v = s.Find(m);
  if (!v) return "N/A";
  char buf[48];
  std::snprintf(buf, sizeof(buf), "%.0f%s", std::floor(*v / divisor + 0.5), suffix);
  return buf;
}

std::string PState(const GpuSample& s) {
  std::optional<double> v = s.Find(Metric::kPState);
  if (!v || *v < 0 || *v > 15) return "N/A";
  return base::Concat({"P", std::to_string(std::llround(*v))});
}

std::string Header(const Snapshot& snapshot, const SummaryOptions& options) {
  const SystemInfo& sys = snapshot.system;
  std::string line = "gpuscope " + std::string(Version());
  line += "   Driver Version: " + (sys.driver_version.empty() ? "N/A" : sys.driver_version);
  line += "   CUDA Version: " + (sys.cuda_version.empty() ? "N/A" : sys.cuda_version);
  if (!sys.hostname.empty()) line += "   Host: " + sys.hostname;
  line += "\n";
  if (options.simulated) {
    line += "simulated node (scenario " +
            (options.scenario.empty() ? std::string("default") : options.scenario) + ")\n";
  }
  return line;
}

std::string GpuLine(const GpuInfo& gpu, const GpuSample& s, std::size_t name_width) {
  std::string line = Pad(std::to_string(gpu.index), 3, true) + "  " + Pad(gpu.name, name_width) +
                     "  " + Pad(gpu.pci_bus_id, 16) + "  ";
  if (s.state == GpuState::kLost) return line + "GPU is lost: " + s.state_reason + "\n";
  line.append(Pad(Number(s, Metric::kGpuTemp, "C"), 5, true))
      .append("  ")
      .append(Pad(PState(s), 4, true))
      .append("  ");
  line += Pad(Number(s, Metric::kPowerUsage, "W"), 5, true) + " / " +
          Pad(Number(s, Metric::kPowerLimit, "W"), 5) + "  ";
  line += Pad(Number(s, Metric::kMemoryUsed, "MiB", kMiB), 9, true) + " / " +
          Pad(Number(s, Metric::kMemoryTotal, "MiB", kMiB), 10) + "  ";
  line += Pad(Number(s, Metric::kGpuUtil, "%"), 4, true);
  if (s.state == GpuState::kStale) line += "  (stale: " + s.state_reason + ")";
  return line + "\n";
}

std::string MigLine(const GpuInfo& mig) {
  std::string line = "     MIG " + Pad(mig.mig_profile, 9) + " GI " +
                     std::to_string(mig.gpu_instance_id.value_or(0)) + " CI " +
                     std::to_string(mig.compute_instance_id.value_or(0)) + "  " + mig.mig_uuid;
  return line + "\n";
}

std::string Processes(const Snapshot& snapshot) {
  std::string out = "Processes:\n  GPU      PID    Memory  Name\n";
  bool any = false;
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    if (snapshot.gpus[i].gpu_instance_id) continue;  // listed with the parent
    for (const ProcessInfo* process : ProcessesOnGpu(snapshot, i)) {
      const ProcessInfo& p = *process;
      any = true;
      std::string memory = p.used_memory_bytes
                               ? std::to_string(*p.used_memory_bytes / (1024 * 1024)) + "MiB"
                               : "N/A";
      out += "  " + Pad(std::to_string(snapshot.gpus[i].index), 3, true) + "  " +
             Pad(std::to_string(p.pid), 7, true) + "  " + Pad(memory, 8, true) + "  " +
             (p.name.empty() ? "N/A" : p.name) + ProcessServes(snapshot, p) + "\n";
    }
  }
  if (!any) out += "  No running processes found\n";
  return out;
}

}  // namespace

// "Workloads:" and one line per holder of each device; nothing without attribution.
std::string Holders(const Snapshot& snapshot) {
  std::string out;
  for (const GpuInfo& gpu : snapshot.gpus) {
    if (!snapshot.attribution) break;
    for (const Holder& h : snapshot.attribution->Of(gpu)) {
      std::string where = "  " + Pad(std::to_string(gpu.index), 3, true);
      if (gpu.gpu_instance_id) where += " GI " + std::to_string(*gpu.gpu_instance_id);
      out += Pad(where, 11) + "  " + h.Describe() + "\n";
    }
  }
  return out.empty() ? out : "\nWorkloads:\n  GPU        Serves\n" + out;
}

std::string FormatSummary(const Snapshot& snapshot, const SummaryOptions& options) {
  std::string out = Header(snapshot, options);
  std::size_t name_width = 4;
  for (const GpuInfo& gpu : snapshot.gpus) name_width = std::max(name_width, gpu.name.size());
  out += "\nGPU  " + Pad("Name", name_width) + "  " + Pad("Bus-Id", 16) + "  " +
         Pad("Temp", 5, true) + "  " + Pad("Perf", 4, true) + "  " + Pad("Power use/cap", 13) +
         "  " + Pad("Memory used / total", 22) + "  " + Pad("Util", 4, true) + "\n";
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    const GpuInfo& gpu = snapshot.gpus[i];
    out += gpu.gpu_instance_id ? MigLine(gpu) : GpuLine(gpu, snapshot.samples[i], name_width);
  }
  out += Holders(snapshot);
  // MIG instances alone (top -i MIG-..., an agent run with -d i) are found.
  if (snapshot.gpus.empty()) out += "  No GPUs were found\n";
  return out + "\n" + Processes(snapshot);
}

Status RunSummary(Invocation& inv) {
  AgentOption agent;
  Status parsed = ForEachOption(inv.args, "", kAgentValueFlags, [&](const Option& o) -> Status {
    if (agent.Take(o)) return Status::Ok();
    if (o.flag.starts_with("-")) return UnknownOption(o, "", Usage());
    return Status::InvalidArgument("Unexpected argument \"" + o.raw +
                                   "\"; run gpuscope --help for the commands.");
  });
  if (!parsed.ok()) return parsed;
  Result<std::unique_ptr<Node>> node = OpenNode(inv.common, agent);
  if (!node.ok()) return node.status();
  Result<SnapshotPtr> snapshot = (*node)->Sample();
  if (!snapshot.ok()) return snapshot.status();
  SummaryOptions options{(*node)->simulated(), (*node)->scenario()};
  // An agent's snapshot carries its own attribution.
  *inv.out << FormatSummary(agent.remote() ? **snapshot : *Attribute(inv.common, *snapshot),
                            options);
  return LostGpus(**snapshot);
}

}  // namespace gpuscope::cli
