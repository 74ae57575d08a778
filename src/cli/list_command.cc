#include "cli/list_command.h"

#include <cstdio>
#include <ostream>
#include <set>

#include "cli/agent_source.h"
#include "cli/node.h"
#include "cli/options.h"
#include "cli/sim_clock.h"

namespace gpuscope::cli {
namespace {

std::string Known(const std::string& text) { return text.empty() ? "[N/A]" : text; }

std::string ListUsage() {
  return std::string(
             "Usage: gpuscope -L [--agent URL [TLS, auth]]   (also --list-gpus, or gpuscope "
             "list)\n"
             "Every GPU with its UUID, MIG devices indented below their GPU, as nvidia-smi -L\n"
             "prints them. A lost GPU fails the command (exit 15) after the others are "
             "listed.\n\n") +
         AgentOptionHelp("the GPUs") + kSimMomentHelp;
}

}  // namespace

std::string FormatGpuList(const Snapshot& snapshot) {
  std::string out;
  std::set<unsigned> listed;
  for (const GpuInfo& gpu : snapshot.gpus) {
    // Each GPU once, where it first appears: its own entry, or (an agent that
    // watches MIG instances only, serve -d i) its first instance's, which
    // carries the GPU's index, name and UUID.
    if (!listed.insert(gpu.index).second) continue;
    out += "GPU " + std::to_string(gpu.index) + ": " + Known(gpu.name) +
           " (UUID: " + Known(gpu.uuid) + ")\n";
    // MIG devices follow their GPU in the snapshot; numbered as NVML's
    // MIG device indexes, in order.
    unsigned device = 0;
    for (std::size_t m = 0; m < snapshot.gpus.size(); ++m) {
      const GpuInfo& mig = snapshot.gpus[m];
      if (!mig.is_mig() || mig.index != gpu.index) continue;
      std::string profile = mig.mig_profile;
      if (profile.size() < 11) profile.resize(11, ' ');
      char number[16];
      std::snprintf(number, sizeof(number), "%2u", device++);
      out += "  MIG " + profile + " Device " + number + ": (UUID: " + Known(mig.mig_uuid) + ")\n";
    }
  }
  return out;
}

Status RunList(Invocation& inv) {
  AgentOption agent;
  bool help = false;
  Status parsed = ForEachOption(inv.args, "-L", kAgentValueFlags, [&](const Option& o) -> Status {
    if ((o.flag == "-h" || o.flag == "--help") && !o.inline_value) {
      help = true;
    } else if (!agent.Take(o)) {
      return UnknownOption(o, "list", ListUsage());
    }
    return Status::Ok();
  });
  if (!parsed.ok()) return parsed;
  if (help) {
    *inv.out << ListUsage();
    return Status::Ok();
  }
  Result<std::unique_ptr<Node>> node = OpenNode(inv.common, agent);
  if (!node.ok()) return node.status();
  Result<SnapshotPtr> snapshot = (*node)->Sample();
  if (!snapshot.ok()) return snapshot.status();
  *inv.out << FormatGpuList(**snapshot);
  // A lost GPU fails -L as every command (exit 15), after the others are listed.
  return LostGpus(**snapshot);
}

}  // namespace gpuscope::cli
