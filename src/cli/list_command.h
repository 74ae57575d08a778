// `gpuscope -L` (also `--list-gpus` or `gpuscope list`): every GPU with its
// UUID, its MIG devices indented below it, byte for byte as `nvidia-smi -L`:
//
//   GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-...)
//     MIG 3g.40gb     Device  0: (UUID: MIG-...)
//
// A lost GPU is listed by what is known of it and fails the command
// (GpuLost, exit 15, naming it), after the others are printed. With --agent URL
// the list is the agent's (cli/agent_source.h).
//
// Thread safety: runs on main's thread; FormatGpuList is pure.
#pragma once

#include <string>

#include "cli/commands.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// The list of `snapshot`'s GPUs and MIG devices, as nvidia-smi -L prints it.
std::string FormatGpuList(const Snapshot& snapshot);

Status RunList(Invocation& inv);

}  // namespace gpuscope::cli
