// Slurm (HPC) job attribution from dcgm-exporter's job-mapping directory
// (`--hpc-job-mapping-dir`): one file per GPU holding the ids of the jobs that
// use it, one per line. A prolog writes the file and an epilog removes it.
// A file's name says which GPU it is about (ParseHpcGpuName):
//   "3"           NVML index 3: dcgm-exporter's convention
//   "nvidia3"     the GPU whose device file is /dev/nvidia3 (minor number 3),
//                 whatever NVML's order: what deploy/slurm/gpuscope-prolog
//                 writes, since Slurm numbers GPUs by their device files
//   "GPU-<uuid>"  that GPU; "MIG-<uuid>" that MIG instance (Slurm 25.11
//                 names GPUs by UUID in CUDA_VISIBLE_DEVICES)
// Other names and subdirectories are ignored, as dcgm-exporter does. Blank
// lines and surrounding spaces are dropped (dcgm-exporter keeps a blank line
// as an empty job; an empty hpc_job label helps nobody).
// Thread safety: free functions.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::attribution {

// A mapping file holds a few job ids; a larger one is skipped.
inline constexpr std::size_t kMaxHpcJobFileBytes = 64 << 10;

// Which GPU a mapping file's name names.
struct HpcGpuName {
  enum class Kind { kIndex, kMinor, kUuid, kMigUuid };
  Kind kind = Kind::kIndex;
  unsigned number = 0;  // kIndex, kMinor
  std::string uuid;     // kUuid ("GPU-..."), kMigUuid ("MIG-...")

  // Whether `device` is the GPU (or MIG instance) named. An index, minor or
  // GPU UUID names a whole GPU and, on a MIG-enabled one, each of its
  // instances; a MIG UUID names that instance only.
  bool Names(const GpuInfo& device) const;
};

// The GPU a file name names; nullopt for a name of none of the forms above.
std::optional<HpcGpuName> ParseHpcGpuName(std::string_view file_name);

// Mapping file name -> job ids, in file order, without duplicates.
using HpcJobMap = std::map<std::string, std::vector<std::string>>;

// The job ids in one mapping file's text.
std::vector<std::string> ParseHpcJobFile(std::string_view text);

// Reads every mapping file in `dir` whose name names a GPU. NotFound when the
// directory is missing; a file that vanishes between listing and reading (an
// epilog ran), that is not a regular file (a FIFO never blocks the read) or
// is larger than kMaxHpcJobFileBytes is skipped.
Result<HpcJobMap> ReadHpcJobDir(const std::string& dir);

}  // namespace gpuscope::attribution
