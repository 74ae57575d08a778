// The notes `gpuscope run` adds to a command's report (docs/reports.md),
// beside those of `gpuscope report` (Notes in report.h): what only a run
// knows, as rules as data (kRunNoteRules in run_notes.cc).
//   visible_untouched: GPUs that CUDA_VISIBLE_DEVICES named and the command
//                      never touched;
//   first_kernel_late: the command's first GPU work came only N s after it
//                      started (data loading, compilation, start-up);
//   shared:            another user's (or another tree's) process ran on a
//                      GPU the command used; its use is not the command's.
//
// Thread safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpuscope/snapshot.h"
#include "jobs/report.h"

namespace gpuscope::jobs {

// A process on one of the command's GPUs that is not the command's.
struct SharingProcess {
  unsigned gpu = 0;  // NVML index
  unsigned pid = 0;
  std::string name, user;  // user "" when unknown
  auto operator<=>(const SharingProcess&) const = default;
};

struct RunFacts {
  double wall_seconds = 0;
  // Seconds from the start to the first cycle where a GPU the command held
  // was busy; nullopt when it never was.
  std::optional<double> first_kernel_seconds;
  // CUDA_VISIBLE_DEVICES as the command saw it; nullopt when unset.
  std::optional<std::string> cuda_visible_devices;
  std::vector<GpuInfo> gpus;  // every GPU of the node (whole GPUs and MIG instances)
  std::vector<SharingProcess> sharing;
};

// The GPUs that a CUDA_VISIBLE_DEVICES value names, among `gpus`: indices
// (NVML's order, which CUDA's matches on a node of identical GPUs), "GPU-..."
// and "MIG-..." UUIDs or their unique prefixes. Entries that name nothing are
// left out (CUDA stops at the first invalid one; so does this).
std::vector<GpuInfo> VisibleGpus(const std::string& value, const std::vector<GpuInfo>& gpus);

// The run's notes for `report` (its gpus filled), in kRunNoteRules order.
std::vector<Note> RunNotes(const Report& report, const RunFacts& facts,
                           const NoteThresholds& thresholds);

// The whole report of a command that held no GPU: one line.
std::string NoGpuLine(const std::string& command, double wall_seconds);

}  // namespace gpuscope::jobs
