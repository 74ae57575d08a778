#include "cli/query_vgpu.h"

#include <fmt/format.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "base/text.h"
#include "cli/query_fields.h"
#include "gpuscope/version.h"

namespace gpuscope::cli {
namespace {

using Opt = std::optional<std::string>;

constexpr uint64_t kMiB = 1024 * 1024;

Opt NonEmpty(const std::string& s) { return s.empty() ? Opt() : Opt(s); }
Opt Mib(std::optional<uint64_t> bytes) {
  return bytes ? Opt(std::to_string(*bytes / kMiB)) : Opt();
}
Opt Percent(std::optional<double> ratio) {
  return ratio ? Opt(std::to_string(std::llround(*ratio * 100))) : Opt();
}

// nvidia-smi vgpu -q's "License Status" words for NVML_GRID_LICENSE_STATE_*.
Opt LicenseText(std::optional<unsigned> state) {
  static constexpr const char* kStates[] = {
      "Unknown",    "Uninitialized", "Unlicensed (Unrestricted)", "Unlicensed (Restricted)",
      "Unlicensed", "Licensed"};
  if (!state || *state >= std::size(kStates)) return std::nullopt;
  return kStates[*state];
}

Opt FbFree(const VgpuRow& r) {
  const VgpuInstance& v = *r.vgpu;
  if (!v.fb_total_bytes || !v.fb_used_bytes || *v.fb_used_bytes > *v.fb_total_bytes) {
    return std::nullopt;
  }
  return Mib(*v.fb_total_bytes - *v.fb_used_bytes);
}

const std::vector<VgpuField>& Table() {
  static const auto* fields = new std::vector<VgpuField>{
      {"timestamp", "",
       [](const VgpuRow& r) { return Opt(FormatTimestamp(r.snapshot->timestamp)); },
       "When the query ran, as \"YYYY/MM/DD HH:MM:SS.msec\" in local time."},
      {"gpu_index", "", [](const VgpuRow& r) { return Opt(std::to_string(r.gpu->index)); },
       "Index of the physical GPU (the board) the vGPU runs on."},
      {"gpu_name", "", [](const VgpuRow& r) { return NonEmpty(r.gpu->name); },
       "Product name of the board."},
      {"gpu_bus_id", "", [](const VgpuRow& r) { return NonEmpty(r.gpu->pci_bus_id); },
       "PCI bus id of the board, as -i accepts it."},
      {"gpu_uuid", "", [](const VgpuRow& r) { return NonEmpty(r.gpu->uuid); },
       "UUID of the board (GPU-...)."},
      {"vgpu_id", "", [](const VgpuRow& r) { return Opt(std::to_string(r.vgpu->id)); },
       "NVML's id of the vGPU instance (\"vGPU ID\" in nvidia-smi vgpu); it lasts while the VM "
       "runs."},
      {"vgpu_uuid", "", [](const VgpuRow& r) { return NonEmpty(r.vgpu->uuid); },
       "UUID of the vGPU instance."},
      {"vgpu_name", "", [](const VgpuRow& r) { return NonEmpty(r.vgpu->type); },
       "Name of the vGPU type (\"vGPU Name\" in nvidia-smi vgpu -q), e.g. GRID H100-20C: board, "
       "framebuffer GiB and series."},
      {"vm_id", "", [](const VgpuRow& r) { return NonEmpty(r.vgpu->vm_id); },
       "The VM as NVML names it (nvmlVgpuInstanceGetVmID): its UUID on KVM, its domain id "
       "where the hypervisor gives one (\"VM UUID\" or \"VM ID\" in nvidia-smi vgpu -q)."},
      {"vm_name", "", [](const VgpuRow& r) { return NonEmpty(r.vgpu->vm_name); },
       "Name of the VM. NVML's API has no call that gives it (nvidia-smi reads it from the "
       "hypervisor), so gpuscope prints [N/A]; vm_id names the VM (docs/attribution.md)."},
      {"license_status", "", [](const VgpuRow& r) { return LicenseText(r.vgpu->license_state); },
       "The licence the guest holds: Licensed, Unlicensed (Unrestricted) in the grace period, "
       "Unlicensed (Restricted) after it, Unlicensed, Uninitialized or Unknown."},
      {"fb_memory_usage.total", "MiB", [](const VgpuRow& r) { return Mib(r.vgpu->fb_total_bytes); },
       "Framebuffer of the vGPU type, in MiB."},
      {"fb_memory_usage.used", "MiB", [](const VgpuRow& r) { return Mib(r.vgpu->fb_used_bytes); },
       "Framebuffer the VM uses, in MiB."},
      {"fb_memory_usage.free", "MiB", FbFree, "Framebuffer left to the VM, in MiB."},
      {"utilization.gpu", "%", [](const VgpuRow& r) { return Percent(r.vgpu->sm_utilization); },
       "Share of the board's SM (3D/compute) time the vGPU scheduler gave the instance over the "
       "last sample period, in %; [N/A] when NVML gave no sample."},
      {"utilization.memory", "%",
       [](const VgpuRow& r) { return Percent(r.vgpu->memory_utilization); },
       "Share of the board's memory-controller time the instance used, in %."},
      {"utilization.encoder", "%",
       [](const VgpuRow& r) { return Percent(r.vgpu->encoder_utilization); },
       "Share of the board's video encoder time the instance used, in %."},
      {"utilization.decoder", "%",
       [](const VgpuRow& r) { return Percent(r.vgpu->decoder_utilization); },
       "Share of the board's video decoder time the instance used, in %."},
  };
  return *fields;
}

const VgpuField* Find(std::string_view name) {
  for (const VgpuField& f : Table()) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string Pad(std::string s, std::size_t width, bool right = false) {
  if (s.size() >= width) return s;
  std::string fill(width - s.size(), ' ');
  return right ? fill + s : s + fill;
}

// nvidia-smi shortens what does not fit its column: "NVIDIA GeForce GTX 106...".
std::string Fit(const std::string& s, std::size_t width) {
  if (s.size() <= width) return Pad(s, width);
  return s.substr(0, width - 3) + "...";
}

// nvidia-smi vgpu's three columns: 33, 30 and 12 characters between the bars.
std::string Line(const std::string& a, const std::string& b, const std::string& c) {
  return fmt::format("|{}|{}|{}|\n", Pad(a, 33), Pad(b, 30), Pad(c, 12));
}

std::string Rule(char left, char fill, char right) {
  std::string line(1, left);
  line.append(33, fill).append(1, '+').append(30, fill).append(1, '+').append(12, fill);
  return line + right + "\n";
}

std::string PercentCell(std::optional<double> percent) {
  if (!percent) return "N/A";
  return std::to_string(std::llround(*percent)) + "%";
}

// "Mon Jan 27 17:31:24 2025" in local time, as nvidia-smi heads its tables.
std::string DateLine(double unix_seconds) {
  std::time_t t = static_cast<std::time_t>(unix_seconds);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[64];
  std::strftime(buf, sizeof(buf), "%a %b %e %H:%M:%S %Y", &tm);
  return std::string(buf) + "       \n";
}

}  // namespace

const std::vector<VgpuField>& VgpuFields() { return Table(); }

Result<std::vector<const VgpuField*>> ResolveVgpuFields(std::string_view list) {
  std::vector<const VgpuField*> out;
  while (true) {
    std::size_t comma = list.find(',');
    std::string_view name = base::Trim(list.substr(0, comma), " ");
    const VgpuField* field = Find(name);
    if (field == nullptr) {
      return Status::InvalidArgument("Field \"" + std::string(name) +
                                     "\" is not a valid field to query.");
    }
    out.push_back(field);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

Result<std::vector<std::size_t>> VgpuHosts(const Snapshot& snapshot,
                                           const std::vector<std::size_t>& gpus) {
  std::vector<std::size_t> out;
  for (std::size_t i : gpus) {
    if (i >= snapshot.samples.size()) continue;
    const GpuSample& s = snapshot.samples[i];
    if (s.HostsVgpus()) out.push_back(i);
  }
  if (out.empty()) return Status::NotSupported("No supported devices in vGPU mode.");
  return out;
}

std::string FormatVgpuHeader(const std::vector<const VgpuField*>& fields,
                             const CsvOptions& options) {
  if (!options.header) return "";
  std::string line;
  for (const VgpuField* field : fields) {
    if (!line.empty()) line += ", ";
    line.append(field->name);
    if (!field->unit.empty()) line.append(" [").append(field->unit).append("]");
  }
  return line + "\n";
}

std::string FormatVgpuRows(const Snapshot& snapshot, const std::vector<std::size_t>& hosts,
                           const std::vector<const VgpuField*>& fields, const CsvOptions& options) {
  std::string out;
  for (std::size_t i : hosts) {
    if (i >= snapshot.gpus.size() || i >= snapshot.samples.size()) continue;
    for (const VgpuInstance& v : snapshot.samples[i].vgpus) {
      VgpuRow row{&snapshot, &snapshot.gpus[i], &snapshot.samples[i], &v};
      std::string line;
      for (const VgpuField* field : fields) {
        if (!line.empty()) line += ", ";
        Opt value = field->getter(row);
        if (!value) {
          line += kNotAvailable;
          continue;
        }
        line += *value;
        if (options.units && !field->unit.empty()) line.append(" ").append(field->unit);
      }
      out += line + "\n";
    }
  }
  return out;
}

std::string FormatVgpuTable(const Snapshot& snapshot, const std::vector<std::size_t>& hosts) {
  const std::string& driver = snapshot.system.driver_version;
  std::string out = DateLine(snapshot.timestamp);
  out += fmt::format("+{}+\n", std::string(77, '-'));
  out += "| " + Pad("gpuscope " + std::string(Version()), 34) +
         Pad("Driver Version: " + (driver.empty() ? std::string("N/A") : driver), 42) + "|\n";
  out += Rule('|', '-', '+');
  out += Line(" GPU  Name", " Bus-Id", " GPU-Util");
  out += Line("      vGPU ID     Name", " VM ID     VM Name", " vGPU-Util");
  out += Rule('|', '=', '|');
  for (std::size_t i : hosts) {
    if (i >= snapshot.gpus.size() || i >= snapshot.samples.size()) continue;
    const GpuInfo& gpu = snapshot.gpus[i];
    const GpuSample& s = snapshot.samples[i];
    // fmt, not " " + ...: GCC 12 at -O3 reads those chains as overlapping
    // memcpys (-Werror=restrict, a false positive).
    out += Line(fmt::format("{}  {}", Pad(std::to_string(gpu.index), 4, true), Fit(gpu.name, 25)),
                fmt::format(" {}", gpu.pci_bus_id),
                fmt::format(" {}", Pad(PercentCell(s.Find(Metric::kGpuUtil)), 4, true)));
    for (const VgpuInstance& v : s.vgpus) {
      std::optional<double> util;
      if (v.sm_utilization) util = *v.sm_utilization * 100;
      out += Line(
          fmt::format("      {}  {}", Pad(std::to_string(v.id), 10), Fit(v.type, 14)),
          fmt::format(" {}  {}", Fit(v.vm_id, 7), Fit(v.vm_name.empty() ? "N/A" : v.vm_name, 19)),
          Pad(PercentCell(util), 8, true));
    }
    out += Rule('+', '-', '+');
  }
  return out;
}

namespace {

// "    Label          : value" with the colon at column 42, as nvidia-smi -q.
void Item(std::string& out, int depth, std::string_view label, const Opt& value,
          std::string_view unit = "") {
  std::string line(4 * depth, ' ');
  line.append(label);
  out += Pad(line, 42);
  out += ": ";
  if (!value) {
    out += "N/A\n";
    return;
  }
  out += *value;
  if (!unit.empty()) out.append(" ").append(unit);
  out += "\n";
}

void Heading(std::string& out, int depth, std::string_view label) {
  out.append(4 * depth, ' ').append(label).append("\n");
}

// nvidia-smi says "VM UUID" where the hypervisor names VMs by UUID (KVM),
// "VM ID" where by domain id; the snapshot keeps the id, whose shape tells.
bool LooksLikeUuid(const std::string& id) {
  if (id.size() != 36) return false;
  for (std::size_t i = 0; i < id.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash != (id[i] == '-') || (!dash && !std::isxdigit(static_cast<unsigned char>(id[i])))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string FormatVgpuDetail(const Snapshot& snapshot, const std::vector<std::size_t>& hosts) {
  std::string out;
  for (std::size_t i : hosts) {
    if (i >= snapshot.gpus.size() || i >= snapshot.samples.size()) continue;
    const GpuSample& s = snapshot.samples[i];
    if (!out.empty()) out += "\n";
    out += "GPU " + snapshot.gpus[i].pci_bus_id + "\n";
    Item(out, 1, "Active vGPUs", std::to_string(s.vgpus.size()));
    for (const VgpuInstance& v : s.vgpus) {
      VgpuRow row{&snapshot, &snapshot.gpus[i], &s, &v};
      Item(out, 1, "vGPU ID", std::to_string(v.id));
      Item(out, 2, LooksLikeUuid(v.vm_id) ? "VM UUID" : "VM ID", NonEmpty(v.vm_id));
      Item(out, 2, "VM Name", NonEmpty(v.vm_name));
      Item(out, 2, "vGPU Name", NonEmpty(v.type));
      Item(out, 2, "vGPU UUID", NonEmpty(v.uuid));
      Item(out, 2, "License Status", LicenseText(v.license_state));
      Heading(out, 2, "FB Memory Usage");
      Item(out, 3, "Total", Mib(v.fb_total_bytes), "MiB");
      Item(out, 3, "Used", Mib(v.fb_used_bytes), "MiB");
      Item(out, 3, "Free", FbFree(row), "MiB");
      Heading(out, 2, "Utilization");
      Item(out, 3, "GPU", Percent(v.sm_utilization), "%");
      Item(out, 3, "Memory", Percent(v.memory_utilization), "%");
      Item(out, 3, "Encoder", Percent(v.encoder_utilization), "%");
      Item(out, 3, "Decoder", Percent(v.decoder_utilization), "%");
    }
  }
  return out;
}

std::string VgpuFieldHelp() {
  std::string text = "List of valid properties to query for the switch \"--query-vgpu=\":\n";
  for (const VgpuField& field : Table()) {
    text.append("\n\"").append(field.name).append("\"\n").append(field.help).append("\n");
  }
  return text;
}

}  // namespace gpuscope::cli
