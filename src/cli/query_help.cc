#include "cli/query_help.h"

#include <map>
#include <string_view>
#include <vector>

namespace gpuscope::cli {
namespace {

// Fields that are not catalog metrics, by canonical name.
const std::map<std::string_view, std::string_view>& Descriptions() {
  static const auto* table = new std::map<std::string_view, std::string_view>{
      {"timestamp", "When the query ran, as \"YYYY/MM/DD HH:MM:SS.msec\" in local time."},
      {"driver_version", "Version of the installed NVIDIA driver, e.g. 570.133.20."},
      {"count", "Number of NVIDIA GPUs in the system (MIG instances not counted)."},
      {"name", "Product name of the GPU, e.g. NVIDIA H100 80GB HBM3."},
      {"serial", "Serial number printed on the board; unique per board."},
      {"uuid",
       "Globally unique, immutable id of the GPU (GPU-...); it does not follow the PCI "
       "slot or the index."},
      {"pci.bus_id", "PCI bus id as domain:bus:device.function, in hexadecimal."},
      {"pci.domain", "PCI domain number, in hexadecimal."},
      {"pci.bus", "PCI bus number, in hexadecimal."},
      {"pci.device", "PCI device number, in hexadecimal."},
      {"pci.device_id", "PCI vendor and device id, in hexadecimal."},
      {"pci.sub_device_id", "PCI sub-system id, in hexadecimal."},
      {"pcie.link.gen.gpucurrent", "Current PCIe link generation of the GPU's side of the link."},
      {"pcie.link.gen.gpumax", "Highest PCIe generation the GPU supports."},
      {"pcie.link.gen.hostmax", "Highest PCIe generation the host side of the link supports."},
      {"index",
       "Zero-based index of the GPU, as NVML enumerates it; it may change across "
       "reboots: use uuid to name a GPU for good."},
      {"display_mode", "Whether a physical display is connected to one of the GPU's connectors."},
      {"display_active", "Whether the GPU drives a display (memory set aside for it)."},
      {"persistence_mode",
       "Whether the driver stays loaded with no client (Enabled), which "
       "saves start-up latency for the next CUDA program."},
      {"accounting.mode", "Whether per-process accounting is on."},
      {"vbios_version", "Version of the GPU's video BIOS."},
      {"gpu_recovery_action",
       "What the driver asks for to recover the GPU: None, Reset, "
       "Reboot, Drain P2P or Drain and Reset."},
      {"compute_mode",
       "Who may create CUDA contexts: Default (many per process), "
       "Exclusive_Process (one process) or Prohibited."},
      {"compute_cap", "CUDA compute capability of the GPU, major.minor (9.0 for Hopper)."},
      {"temperature.gpu.tlimit",
       "Degrees C left before the GPU reaches its maximum "
       "operating temperature."},
      {"power.management", "Whether power management (a power limit) is on for this GPU."},
      {"mig.mode.current", "Whether MIG (Multi-Instance GPU) mode is on now."},
      {"mig.mode.pending", "The MIG mode the GPU takes after its next reset."},
      {"ecc.mode.current", "Whether ECC is on now."},
      {"ecc.mode.pending", "The ECC mode the GPU takes after its next reboot."},
      {"memory.reserved", "Device memory the driver reserves for itself, in MiB."},
      {"clocks_event_reasons.gpu_idle", "Clocks are low because nothing runs on the GPU."},
      {"clocks_event_reasons.applications_clocks_setting",
       "Clocks are held at the applications clock setting."},
      {"clocks_event_reasons.sw_power_cap",
       "The driver lowers clocks to keep power draw under "
       "the power limit (power.limit)."},
      {"clocks_event_reasons.hw_slowdown",
       "Hardware slowdown: clocks cut by a factor of two or "
       "more (temperature, power brake or power supply)."},
      {"clocks_event_reasons.hw_thermal_slowdown",
       "Hardware thermal slowdown: the GPU is too hot and halves its clocks or more."},
      {"clocks_event_reasons.hw_power_brake_slowdown",
       "Hardware power brake: an external signal (the power supply) forces clocks down."},
      {"clocks_event_reasons.sw_thermal_slowdown",
       "The driver lowers clocks to keep the GPU or its memory under their maximum "
       "temperature."},
      {"clocks_event_reasons.sync_boost",
       "Clocks are held down to match other GPUs of a sync "
       "boost group."},
      {"clocks_event_reasons.display_clock_setting",
       "Clocks are held at the display clock setting."},
  };
  return *table;
}

// "ecc.errors.corrected.volatile.dram" -> a sentence from its parts.
std::string EccDescription(std::string_view name) {
  constexpr std::string_view kPrefix = "ecc.errors.";
  if (!name.starts_with(kPrefix)) return "";
  name.remove_prefix(kPrefix.size());
  const std::size_t a = name.find('.'), b = name.find('.', a + 1);
  if (a == std::string_view::npos || b == std::string_view::npos) return "";
  const std::string_view kind = name.substr(0, a), scope = name.substr(a + 1, b - a - 1);
  std::string where(name.substr(b + 1));
  for (char& c : where) c = c == '_' ? ' ' : c;
  std::string text = (kind == "corrected" ? "Single-bit (corrected)" : "Double-bit (uncorrected)");
  text += " ECC errors in " + (where == "total" ? std::string("all of the GPU") : where);
  text += scope == "volatile" ? ", since the driver was last loaded."
                              : ", over the GPU's lifetime (persistent).";
  return text;
}

// Appended rather than "\"" + ...: GCC 12 at -O3 reads the operator+ chains
// as an overlapping memcpy (-Werror=restrict, a false positive).
std::string Quoted(std::string_view name) {
  std::string text = "\"";
  text.append(name).append("\"");
  return text;
}

// One field's entry: its quoted name, its aliases and its description.
void AppendField(std::string& text, std::string_view name, const std::vector<std::string>& aliases,
                 const std::string& description) {
  text.append("\n").append(Quoted(name));
  for (const std::string& alias : aliases) text.append(" or ").append(Quoted(alias));
  text.append("\n").append(description).append("\n");
}

}  // namespace

std::string GpuFieldDescription(const GpuField& field) {
  auto it = Descriptions().find(field.name);
  std::string text;
  if (it != Descriptions().end()) {
    text = it->second;
  } else if (field.kind == GpuField::Kind::kMetric) {
    text = Def(field.metric).help;
  } else {
    text = EccDescription(field.name);
  }
  if (!text.empty() && field.kind == GpuField::Kind::kNotAvailable) {
    text += " gpuscope always prints [N/A] here: NVML does not give it.";
  }
  return text;
}

std::string AppFieldDescription(const AppField& field) {
  static const auto* table = new std::map<std::string_view, std::string_view>{
      {"timestamp", "When the query ran, as \"YYYY/MM/DD HH:MM:SS.msec\" in local time."},
      {"gpu_name", "Product name of the GPU the process runs on."},
      {"gpu_bus_id", "PCI bus id of the GPU the process runs on."},
      {"gpu_serial", "Serial number of the GPU the process runs on."},
      {"gpu_uuid", "UUID of the GPU the process runs on."},
      {"pid", "Process id of the compute application (in the host's pid namespace)."},
      {"process_name", "Name of the process, as the driver reports it."},
      {"used_gpu_memory",
       "Device memory the process uses, in MiB; [N/A] where the driver "
       "does not tell (some MIG and Windows WDDM setups)."},
  };
  auto it = table->find(field.name);
  return it == table->end() ? std::string() : std::string(it->second);
}

std::string GpuFieldHelp() {
  std::string text = "List of valid properties to query for the switch \"--query-gpu=\":\n";
  for (const GpuField& field : GpuFields()) {
    AppendField(text, field.name, GpuFieldAliases(field.name), GpuFieldDescription(field));
  }
  return text;
}

std::string AppFieldHelp() {
  std::string text =
      "List of valid properties to query for the switch \"--query-compute-apps=\":\n";
  for (const AppField& field : AppFields()) {
    AppendField(text, field.name, AppFieldAliases(field.name), AppFieldDescription(field));
  }
  return text;
}

}  // namespace gpuscope::cli
