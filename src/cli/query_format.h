// nvidia-smi compatible CSV: pure functions from a Snapshot, a field list and
// format options to text (reference/nvidia-smi-compat.md). Header: canonical
// names joined by ", " with the unit in brackets (kept with nounits, as
// nvidia-smi does); rows: values joined by ", ", each followed by " <unit>"
// unless nounits; unavailable values print "[N/A]" without a unit.
// Thread safety: pure functions, safe from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cli/query_fields.h"
#include "gpuscope/snapshot.h"

namespace gpuscope::cli {

// --format=csv[,noheader][,nounits]
struct CsvOptions {
  bool header = true;
  bool units = true;
};

inline constexpr const char* kNotAvailable = "[N/A]";

// The header line with its newline, or "" when options.header is false.
std::string FormatGpuHeader(const std::vector<const GpuField*>& fields, const CsvOptions& options);
std::string FormatAppHeader(const std::vector<const AppField*>& fields, const CsvOptions& options);

// One line per GPU in `gpus` (indexes into snapshot.gpus, in that order).
std::string FormatGpuRows(const Snapshot& snapshot, const std::vector<std::size_t>& gpus,
                          const std::vector<const GpuField*>& fields, const CsvOptions& options);
// One line per process running on the GPUs in `gpus`.
std::string FormatAppRows(const Snapshot& snapshot, const std::vector<std::size_t>& gpus,
                          const std::vector<const AppField*>& fields, const CsvOptions& options);

// The processes of the whole GPU at `gpu`: its own list, or when that is
// empty the lists of its MIG instances (which share the parent's uuid).
std::vector<const ProcessInfo*> ProcessesOnGpu(const Snapshot& snapshot, std::size_t gpu);
// "  (serves ml/web-x2kq9 (container srv, workload web))" for a process whose
// holder Snapshot::attribution knows; empty otherwise.
std::string ProcessServes(const Snapshot& snapshot, const ProcessInfo& process);

}  // namespace gpuscope::cli
