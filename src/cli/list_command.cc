#include "cli/list_command.h"

#include <cstdio>
#include <ostream>

#include "cli/node.h"
#include "cli/sim_clock.h"

namespace gpuscope::cli {
namespace {

std::string Known(const std::string& text) { return text.empty() ? "[N/A]" : text; }

std::string ListUsage() {
  return std::string(
             "Usage: gpuscope -L   (also --list-gpus, or gpuscope list)\n"
             "Every GPU with its UUID, MIG devices indented below their GPU, as nvidia-smi -L\n"
             "prints them. A lost GPU fails the command after the others are listed.\n") +
         kSimMomentHelp;
}

}  // namespace

std::string FormatGpuList(const Snapshot& snapshot) {
  std::string out;
  for (std::size_t i = 0; i < snapshot.gpus.size(); ++i) {
    const GpuInfo& gpu = snapshot.gpus[i];
    if (gpu.is_mig()) continue;
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
  for (const std::string& arg : inv.args) {
    if (arg == "-h" || arg == "--help") {
      *inv.out << ListUsage();
      return Status::Ok();
    }
    return Status::InvalidArgument("Unknown option \"" + arg +
                                   "\" for gpuscope -L; see gpuscope -L --help.");
  }
  Result<std::unique_ptr<Node>> node = Node::Open(inv.common);
  if (!node.ok()) return node.status();
  Result<SnapshotPtr> snapshot = (*node)->Sample();
  if (!snapshot.ok()) return snapshot.status();
  *inv.out << FormatGpuList(**snapshot);
  const Snapshot& s = **snapshot;
  for (std::size_t i = 0; i < s.gpus.size() && i < s.samples.size(); ++i) {
    if (s.samples[i].state == GpuState::kLost && !s.gpus[i].is_mig()) {
      return Status::Unavailable("GPU " + std::to_string(s.gpus[i].index) +
                                 " is lost: " + s.samples[i].state_reason);
    }
  }
  return Status::Ok();
}

}  // namespace gpuscope::cli
