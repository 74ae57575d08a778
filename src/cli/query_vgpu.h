// `gpuscope query` for the virtual GPUs of a vGPU host, rendered from a
// Snapshot like the rest of query (so any snapshot source serves them):
//
// - `gpuscope query vgpu`: nvidia-smi vgpu's default table, one block per
//   board in host vGPU mode with a line per active vGPU instance (vGPU ID,
//   type, VM ID and name, the share of the board the scheduler gave it);
//   `gpuscope query vgpu -q`: nvidia-smi vgpu -q's detail of each instance.
// - `--query-vgpu=FIELD,...`: CSV in the layout of --query-gpu (header with
//   units in brackets, [N/A], --format=csv[,noheader][,nounits]), one row per
//   instance. nvidia-smi vgpu has no CSV form: the field names are gpuscope's,
//   taken from nvidia-smi vgpu -q's labels (docs/cli.md lists them).
//
// A selection with no board in host vGPU mode is nvidia-smi's "No supported
// devices in vGPU mode." (NotSupported, exit 3).
// Thread safety: pure functions over immutable tables.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cli/query_format.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// What a --query-vgpu value is read from.
struct VgpuRow {
  const Snapshot* snapshot = nullptr;
  const GpuInfo* gpu = nullptr;  // the board
  const GpuSample* sample = nullptr;
  const VgpuInstance* vgpu = nullptr;
};

// A --query-vgpu column.
struct VgpuField {
  using Getter = std::optional<std::string> (*)(const VgpuRow&);
  std::string_view name;  // canonical, heads the column
  std::string_view unit;  // "MiB", "%"; empty when bare
  Getter getter = nullptr;
  std::string_view help;
};

// Every --query-vgpu field, in the order --help-query-vgpu lists them.
const std::vector<VgpuField>& VgpuFields();

// Splits a comma list and resolves each name (case-sensitive, as
// --query-gpu); the error is nvidia-smi's sentence for an unknown field.
Result<std::vector<const VgpuField*>> ResolveVgpuFields(std::string_view list);

// The boards among `gpus` that host virtual GPUs (virtualization mode 3, or
// any instance listed); NotSupported with nvidia-smi's sentence when none.
Result<std::vector<std::size_t>> VgpuHosts(const Snapshot& snapshot,
                                           const std::vector<std::size_t>& gpus);

// The CSV header line ("" with noheader) and one line per instance of the
// boards `hosts` (from VgpuHosts), in board then NVML order.
std::string FormatVgpuHeader(const std::vector<const VgpuField*>& fields,
                             const CsvOptions& options);
std::string FormatVgpuRows(const Snapshot& snapshot, const std::vector<std::size_t>& hosts,
                           const std::vector<const VgpuField*>& fields, const CsvOptions& options);

// nvidia-smi vgpu's table of the boards `hosts`, with its date line (local
// time of the snapshot) and its version box (gpuscope's version in place of
// nvidia-smi's).
std::string FormatVgpuTable(const Snapshot& snapshot, const std::vector<std::size_t>& hosts);

// nvidia-smi vgpu -q's layout: per board its active vGPUs, then each
// instance's VM, type, licence, framebuffer and utilization, labels padded
// to column 42. Lines for what the snapshot does not hold (vGPU Type id,
// guest driver, placement) are left out rather than printed N/A.
std::string FormatVgpuDetail(const Snapshot& snapshot, const std::vector<std::size_t>& hosts);

// The text of --help-query-vgpu.
std::string VgpuFieldHelp();

}  // namespace gpuscope::cli
