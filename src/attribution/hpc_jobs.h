// Slurm (HPC) job attribution from dcgm-exporter's job-mapping directory
// (`--hpc-job-mapping-dir`): one file per GPU, named by the GPU's NVML index
// ("0", "1", ...), holding the ids of the jobs that use it, one per line.
// A prolog writes the file and an epilog removes it. Files whose name is not a
// number and subdirectories are ignored, as dcgm-exporter does. Blank lines
// and surrounding spaces are dropped (dcgm-exporter keeps a blank line as an
// empty job; an empty hpc_job label helps nobody).
// Thread safety: free functions.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::attribution {

// A mapping file holds a few job ids; a larger one is skipped.
inline constexpr std::size_t kMaxHpcJobFileBytes = 64 << 10;

// GPU index -> job ids, in file order, without duplicates.
using HpcJobMap = std::map<unsigned, std::vector<std::string>>;

// The job ids in one mapping file's text.
std::vector<std::string> ParseHpcJobFile(std::string_view text);

// Reads every mapping file in `dir`. NotFound when the directory is missing;
// a file that vanishes between listing and reading (an epilog ran), that is
// not a regular file (a FIFO never blocks the read) or is larger than
// kMaxHpcJobFileBytes is skipped.
Result<HpcJobMap> ReadHpcJobDir(const std::string& dir);

}  // namespace gpuscope::attribution
