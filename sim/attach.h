// Live processes as GPU processes: the control commands `attach` and
// `detach` (sim/README.md), so that a real process tree (a test's child, its
// grandchildren) shows on a simulated GPU with its memory and SM use while it
// lives. The control thread ends each attachment once its process has exited
// (ReapExitedAttachments), as the driver drops an exited process.
//
// Thread safety: as Sim's methods (any thread).
#pragma once

#include <string>
#include <vector>

#include "gpuscope/status.h"
#include "sim.h"

namespace gpuscope::sim {

// `attach <gpu>[/<mig index>] <pid> [memory=<GiB>] [sm=<0..1>] [name=<text>]`
// (words after the command); errors name the word.
Status AttachCommand(Sim& sim, const std::vector<std::string>& words);
// `detach <pid>`.
Status DetachCommand(Sim& sim, const std::vector<std::string>& words);

// Whether pid is a process of this host that has not exited (a zombie has).
// proc_root: where /proc is.
bool ProcessAlive(unsigned pid, const std::string& proc_root = "/proc");

// Detaches every attached pid that is no longer alive.
void ReapExitedAttachments(Sim& sim);

}  // namespace gpuscope::sim
