// `gpuscope query`: nvidia-smi compatible CSV (see query_args.h for the
// flags, query_format.h for the bytes). Fields are checked before NVML is
// loaded, so a bad field name fails fast with nvidia-smi's sentence
// (printed to stderr, exit 2; nvidia-smi itself prints it to stdout).
// With -l/-lms the header is printed once, then one block of rows per
// interval, each from a fresh sample, until SIGINT/SIGTERM. vGPU instances:
// query_vgpu.h (a table per sample, or CSV rows like the others).
// Thread safety: runs on main's thread.
#pragma once

#include <chrono>
#include <functional>
#include <ostream>
#include <vector>

#include "cli/commands.h"
#include "cli/query_args.h"
#include "cli/query_fields.h"
#include "cli/query_vgpu.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// A resolved query: what to print and how often.
struct QueryPlan {
  std::vector<const GpuField*> gpu_fields;    // --query-gpu (empty for compute apps)
  std::vector<const AppField*> app_fields;    // --query-compute-apps
  std::vector<const VgpuField*> vgpu_fields;  // --query-vgpu
  bool vgpu_table = false;                    // `query vgpu`: nvidia-smi vgpu's table
  bool vgpu_detail = false;                   // `query vgpu -q`: its detail
  CsvOptions csv;
  std::optional<std::chrono::milliseconds> loop;
  std::vector<std::string> ids;
};

// Resolves the field names of parsed arguments.
Result<QueryPlan> PlanQuery(const QueryArgs& args);

using SnapshotSource = std::function<Result<SnapshotPtr>()>;
// Waits until the time point; false to stop the loop.
using Waiter = std::function<bool(std::chrono::steady_clock::time_point)>;

// Prints the header once and a block of rows per sample; with a loop, waits
// for the next interval between samples until `wait` returns false.
Status RunQueryLoop(const QueryPlan& plan, const SnapshotSource& source, const Waiter& wait,
                    std::ostream& out);

Status RunQuery(Invocation& inv);

}  // namespace gpuscope::cli
