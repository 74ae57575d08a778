// Argument parsing for `gpuscope query`, in nvidia-smi's syntax:
// `--query-gpu=F,..`, `--query-compute-apps=F,..`, `--query-vgpu=F,..` or the
// word `vgpu` (nvidia-smi vgpu's table; query_vgpu.h), `--format=csv[,noheader]
// [,nounits]`, `-l [N]`/`--loop=N`, `-lms N`/`--loop-ms=N`, `-i ID`/`--id=ID`
// (index, UUID or PCI bus id; comma list), `-f FILE`/`--filename=FILE`, and
// `--agent URL` with its TLS/auth options (cli/agent_source.h).
// Long options take `--opt=value` or `--opt value`; short ones `-o value` or
// `-o=value`. CLI11 does not fit `-lms`, hence this small parser.
// Thread safety: pure functions.
#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/agent_source.h"
#include "cli/query_format.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct QueryArgs {
  std::string gpu_fields;    // raw --query-gpu list; empty when not given
  std::string app_fields;    // raw --query-compute-apps list
  std::string vgpu_fields;   // raw --query-vgpu list
  bool vgpu_table = false;   // `query vgpu` without --query-vgpu: nvidia-smi vgpu's table
  bool vgpu_detail = false;  // `query vgpu -q`: nvidia-smi vgpu -q's detail instead
  CsvOptions csv;
  std::optional<std::chrono::milliseconds> loop;  // nullopt: print once
  std::vector<std::string> ids;                   // -i items, split at commas
  std::string filename;                           // -f; empty: stdout
  AgentOption agent;                              // --agent URL: the agent's snapshot
  enum class Help { kNone, kUsage, kGpuFields, kAppFields, kVgpuFields } help = Help::kNone;
};

// Parses the arguments after `query` (common options already removed).
Result<QueryArgs> ParseQueryArgs(const std::vector<std::string>& args);

// "csv,noheader,nounits" in any order; csv is required.
Result<CsvOptions> ParseFormat(std::string_view value);

// Indexes into snapshot.gpus of the whole GPUs `ids` name (all whole GPUs
// when `ids` is empty), in snapshot order. Items match an NVML index, a
// "GPU-..." UUID or a PCI bus id ("00000000:18:00.0", "0000:18:00.0",
// "18:00.0"), as collect::SelectDevices does; an id matching nothing is
// kNotFound.
Result<std::vector<std::size_t>> SelectGpus(const Snapshot& snapshot,
                                            const std::vector<std::string>& ids);

// Usage text of `gpuscope query`.
std::string QueryUsage();

}  // namespace gpuscope::cli
