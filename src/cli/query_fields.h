// The fields `gpuscope query` accepts, as nvidia-smi names them
// (reference/nvidia-smi-compat.md). Numeric fields come from the metric
// catalog (its SmiName gives name, unit, format and scale); identity and text
// fields (name, uuid, pci.*, modes, clock event reasons, ...) are rows of a
// small table here that read GpuInfo, SystemInfo or a catalog value. Fields
// NVML cannot give us are listed too and always print `[N/A]`.
//
// Lookup is case-sensitive; aliases (gpu_name, clocks.sm, clocks_throttle_
// reasons.*, ...) resolve to the canonical field, whose name heads the column.
// Thread safety: the tables are immutable after first use (built once, thread
// safe static initialisation).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/catalog.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// What a GPU field value is read from.
struct GpuRow {
  const Snapshot* snapshot = nullptr;
  const GpuInfo* gpu = nullptr;
  const GpuSample* sample = nullptr;  // null: no values (only identity fields print)
};

// A --query-gpu column.
struct GpuField {
  enum class Kind : uint8_t {
    kMetric,        // a catalog metric, printed with its SmiFormat and Scale
    kText,          // a getter returning the bare text (nullopt: [N/A])
    kReason,        // one bit of clocks_event_reasons.active: Active / Not Active
    kNotAvailable,  // a valid nvidia-smi field we cannot provide: always [N/A]
  };
  using Getter = std::optional<std::string> (*)(const GpuRow&);

  std::string_view name;  // canonical, heads the column
  std::string_view unit;  // "%", "MiB", "MHz", "W", "us"; empty when bare
  Kind kind = Kind::kNotAvailable;
  Metric metric = Metric::kGpuUtil;  // kMetric
  Getter getter = nullptr;           // kText
  uint64_t reason_bit = 0;           // kReason
};

// A --query-compute-apps column.
struct AppField {
  std::string_view name;  // canonical: pid, process_name, used_gpu_memory, ...
  std::string_view unit;
};

// Every --query-gpu field, in nvidia-smi's documented order, then any
// catalog metric with an nvidia-smi name that order does not list.
const std::vector<GpuField>& GpuFields();
// Every --query-compute-apps field.
const std::vector<AppField>& AppFields();

// Resolves a name or alias; nullptr when nvidia-smi would reject it.
const GpuField* FindGpuField(std::string_view name);
const AppField* FindAppField(std::string_view name);

// The other names nvidia-smi accepts for a canonical field ("gpu_name" for
// "name"), for --help-query-gpu.
std::vector<std::string> GpuFieldAliases(std::string_view canonical);
std::vector<std::string> AppFieldAliases(std::string_view canonical);

// Splits a comma list and resolves each name. The error is nvidia-smi's
// sentence: `Field "x" is not a valid field to query.`
Result<std::vector<const GpuField*>> ResolveGpuFields(std::string_view list);
Result<std::vector<const AppField*>> ResolveAppFields(std::string_view list);

// The bare value text of a field for one GPU (no unit); nullopt prints [N/A].
std::optional<std::string> GpuFieldValue(const GpuField& field, const GpuRow& row);

// "2024/05/01 12:34:56.789" in local time, like nvidia-smi's timestamp.
std::string FormatTimestamp(double unix_seconds);

}  // namespace gpuscope::cli
