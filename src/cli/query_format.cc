#include "cli/query_format.h"

#include <cmath>
#include <optional>
#include <string_view>

#include "gpuscope/attribution.h"

namespace gpuscope::cli {
namespace {

template <typename Field>
std::string Header(const std::vector<const Field*>& fields, const CsvOptions& options) {
  if (!options.header) return "";
  std::string line;
  for (const Field* field : fields) {
    if (!line.empty()) line += ", ";
    line += field->name;
    if (!field->unit.empty()) {
      line += " [";
      line += field->unit;
      line += "]";
    }
  }
  return line + "\n";
}

void AppendCell(std::string& line, const std::optional<std::string>& value, std::string_view unit,
                const CsvOptions& options) {
  if (!line.empty()) line += ", ";
  if (!value) {
    line += kNotAvailable;
    return;
  }
  line += *value;
  if (options.units && !unit.empty()) {
    line += " ";
    line += unit;
  }
}

std::optional<std::string> NonEmpty(const std::string& s) {
  return s.empty() ? std::nullopt : std::optional<std::string>(s);
}

std::optional<std::string> AppValue(std::string_view name, const Snapshot& snapshot,
                                    const GpuInfo& gpu, const ProcessInfo& process) {
  if (name == "timestamp") return FormatTimestamp(snapshot.timestamp);
  if (name == "gpu_name") return NonEmpty(gpu.name);
  if (name == "gpu_bus_id") return NonEmpty(gpu.pci_bus_id);
  if (name == "gpu_serial") return NonEmpty(gpu.serial);
  if (name == "gpu_uuid") return NonEmpty(gpu.uuid);
  if (name == "pid") return std::to_string(process.pid);
  if (name == "process_name") return NonEmpty(process.name);
  if (name == "used_gpu_memory" && process.used_memory_bytes) {
    return std::to_string(*process.used_memory_bytes / (1024 * 1024));
  }
  return std::nullopt;
}

}  // namespace

std::string FormatGpuHeader(const std::vector<const GpuField*>& fields, const CsvOptions& options) {
  return Header(fields, options);
}

std::string FormatAppHeader(const std::vector<const AppField*>& fields, const CsvOptions& options) {
  return Header(fields, options);
}

std::string FormatGpuRows(const Snapshot& snapshot, const std::vector<std::size_t>& gpus,
                          const std::vector<const GpuField*>& fields, const CsvOptions& options) {
  std::string out;
  for (std::size_t i : gpus) {
    if (i >= snapshot.gpus.size()) continue;
    GpuRow row{&snapshot, &snapshot.gpus[i],
               i < snapshot.samples.size() ? &snapshot.samples[i] : nullptr};
    std::string line;
    for (const GpuField* field : fields) {
      AppendCell(line, GpuFieldValue(*field, row), field->unit, options);
    }
    out += line + "\n";
  }
  return out;
}

// Compute processes only, as nvidia-smi's --query-compute-apps.
std::vector<const ProcessInfo*> ProcessesOnGpu(const Snapshot& snapshot, std::size_t gpu) {
  std::vector<const ProcessInfo*> out;
  for (const ProcessInfo& p : snapshot.samples[gpu].processes) {
    if (p.Is(kComputeProcess)) out.push_back(&p);
  }
  if (!out.empty()) return out;
  for (std::size_t i = 0; i < snapshot.gpus.size() && i < snapshot.samples.size(); ++i) {
    if (!snapshot.gpus[i].gpu_instance_id || snapshot.gpus[i].uuid != snapshot.gpus[gpu].uuid) {
      continue;
    }
    for (const ProcessInfo& p : snapshot.samples[i].processes) {
      if (p.Is(kComputeProcess)) out.push_back(&p);
    }
  }
  return out;
}

std::string ProcessServes(const Snapshot& snapshot, const ProcessInfo& process) {
  const Holder* h = snapshot.attribution ? snapshot.attribution->OfProcess(process.pid) : nullptr;
  return h ? "  (serves " + h->Describe() + ")" : "";
}

std::string FormatAppRows(const Snapshot& snapshot, const std::vector<std::size_t>& gpus,
                          const std::vector<const AppField*>& fields, const CsvOptions& options) {
  std::string out;
  for (std::size_t i : gpus) {
    if (i >= snapshot.gpus.size() || i >= snapshot.samples.size()) continue;
    for (const ProcessInfo* process : ProcessesOnGpu(snapshot, i)) {
      std::string line;
      for (const AppField* field : fields) {
        AppendCell(line, AppValue(field->name, snapshot, snapshot.gpus[i], *process), field->unit,
                   options);
      }
      out += line + "\n";
    }
  }
  return out;
}

}  // namespace gpuscope::cli
