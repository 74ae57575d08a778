#include "cli/query_fields.h"

#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <set>

#include "base/text.h"

namespace gpuscope::cli {
namespace {

using Opt = std::optional<std::string>;

std::string Printf(const char* format, unsigned long long value) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, value);
  return buf;
}

Opt NonEmpty(const std::string& s) { return s.empty() ? Opt() : Opt(s); }

Opt EnabledText(bool on) { return on ? "Enabled" : "Disabled"; }

Opt Timestamp(const GpuRow& r) { return FormatTimestamp(r.snapshot->timestamp); }
Opt DriverVersion(const GpuRow& r) { return NonEmpty(r.snapshot->system.driver_version); }
Opt Count(const GpuRow& r) {
  unsigned n = 0;
  for (const GpuInfo& g : r.snapshot->gpus) n += g.gpu_instance_id ? 0 : 1;
  return std::to_string(n);
}
Opt Name(const GpuRow& r) { return NonEmpty(r.gpu->name); }
Opt Serial(const GpuRow& r) { return NonEmpty(r.gpu->serial); }
Opt Uuid(const GpuRow& r) { return NonEmpty(r.gpu->uuid); }
Opt BusId(const GpuRow& r) { return NonEmpty(r.gpu->pci_bus_id); }
Opt PciDomain(const GpuRow& r) { return Printf("0x%04llX", r.gpu->pci_domain); }
Opt PciBus(const GpuRow& r) { return Printf("0x%02llX", r.gpu->pci_bus); }
Opt PciDevice(const GpuRow& r) { return Printf("0x%02llX", r.gpu->pci_device); }
Opt PciDeviceId(const GpuRow& r) { return Printf("0x%08llX", r.gpu->pci_device_id); }
Opt PciSubDeviceId(const GpuRow& r) { return Printf("0x%08llX", r.gpu->pci_sub_system_id); }
Opt Index(const GpuRow& r) { return std::to_string(r.gpu->index); }
Opt DisplayMode(const GpuRow& r) { return r.gpu->display_mode; }
Opt PersistenceMode(const GpuRow& r) { return r.gpu->persistence_mode; }
Opt ComputeMode(const GpuRow& r) { return r.gpu->compute_mode; }
Opt VbiosVersion(const GpuRow& r) { return NonEmpty(r.gpu->vbios_version); }
Opt ComputeCap(const GpuRow& r) { return NonEmpty(r.gpu->compute_capability); }
Opt MigMode(const GpuRow& r) { return EnabledText(r.gpu->mig_enabled); }

std::optional<double> Value(const GpuRow& r, Metric m) {
  return r.sample ? r.sample->Find(m) : std::nullopt;
}

// nvidia-smi prints the driver's recovery action as a word.
Opt RecoveryAction(const GpuRow& r) {
  static constexpr const char* kActions[] = {"None", "Reset", "Reboot", "Drain P2P",
                                             "Drain and Reset"};
  std::optional<double> v = Value(r, Metric::kRecoveryAction);
  if (!v || *v < 0 || *v >= std::size(kActions)) return std::nullopt;
  return kActions[static_cast<int>(*v)];
}

// Degrees left before the GPU's maximum operating temperature.
Opt TempLimit(const GpuRow& r) {
  std::optional<double> max = Value(r, Metric::kGpuMaxTemp);
  std::optional<double> now = Value(r, Metric::kGpuTemp);
  if (!max || !now) return std::nullopt;
  return std::to_string(std::llround(*max - *now));
}

// The GPU side of the link; NVML reports one current generation for both.
Opt GpuLinkGen(const GpuRow& r) {
  std::optional<double> v = Value(r, Metric::kPcieLinkGen);
  return v ? Opt(std::to_string(std::llround(*v))) : Opt();
}

Opt PowerManagement(const GpuRow& r) {
  return Value(r, Metric::kPowerManagementLimit) ? Opt("Enabled") : Opt();
}

// Fields that are not a plain catalog value. Checked before the catalog.
const std::map<std::string_view, GpuField::Getter>& TextGetters() {
  static const auto* getters = new std::map<std::string_view, GpuField::Getter>{
      {"timestamp", Timestamp},
      {"driver_version", DriverVersion},
      {"count", Count},
      {"name", Name},
      {"serial", Serial},
      {"uuid", Uuid},
      {"pci.bus_id", BusId},
      {"pci.domain", PciDomain},
      {"pci.bus", PciBus},
      {"pci.device", PciDevice},
      {"pci.device_id", PciDeviceId},
      {"pci.sub_device_id", PciSubDeviceId},
      {"pcie.link.gen.gpucurrent", GpuLinkGen},
      {"index", Index},
      {"display_mode", DisplayMode},
      {"persistence_mode", PersistenceMode},
      {"vbios_version", VbiosVersion},
      {"gpu_recovery_action", RecoveryAction},
      {"compute_mode", ComputeMode},
      {"compute_cap", ComputeCap},
      {"temperature.gpu.tlimit", TempLimit},
      {"power.management", PowerManagement},
      {"mig.mode.current", MigMode},
      {"mig.mode.pending", MigMode},
  };
  return *getters;
}

// Every canonical --query-gpu name, in the reference's order; ECC error
// fields are generated after the marker. Catalog rows with an smi name that
// is missing here are appended after these (GpuFields), so this list only
// orders them.
constexpr std::string_view kEccMarker = "ecc.errors.*";
constexpr std::string_view kGpuFieldOrder[] = {
    "timestamp",
    "driver_version",
    "count",
    "name",
    "serial",
    "uuid",
    "pci.bus_id",
    "pci.domain",
    "pci.bus",
    "pci.device",
    "pci.device_id",
    "pci.sub_device_id",
    "pcie.link.gen.current",
    "pcie.link.gen.gpucurrent",
    "pcie.link.gen.max",
    "pcie.link.gen.gpumax",
    "pcie.link.width.current",
    "pcie.link.width.max",
    "index",
    "display_mode",
    "persistence_mode",
    "vbios_version",
    "gpu_recovery_action",
    "fan.speed",
    "pstate",
    "clocks_event_reasons.supported",
    "clocks_event_reasons.active",
    "clocks_event_reasons.gpu_idle",
    "clocks_event_reasons.applications_clocks_setting",
    "clocks_event_reasons.sw_power_cap",
    "clocks_event_reasons.hw_slowdown",
    "clocks_event_reasons.hw_thermal_slowdown",
    "clocks_event_reasons.hw_power_brake_slowdown",
    "clocks_event_reasons.sw_thermal_slowdown",
    "clocks_event_reasons.sync_boost",
    "clocks_event_reasons_counters.sw_power_cap",
    "clocks_event_reasons_counters.sync_boost",
    "clocks_event_reasons_counters.sw_thermal_slowdown",
    "clocks_event_reasons_counters.hw_thermal_slowdown",
    "clocks_event_reasons_counters.hw_power_brake_slowdown",
    "memory.total",
    "memory.reserved",
    "memory.used",
    "memory.free",
    "compute_mode",
    "compute_cap",
    "utilization.gpu",
    "utilization.memory",
    "utilization.encoder",
    "utilization.decoder",
    "ecc.mode.current",
    "ecc.mode.pending",
    kEccMarker,
    "retired_pages.single_bit_ecc.count",
    "retired_pages.double_bit.count",
    "retired_pages.pending",
    "remapped_rows.correctable",
    "remapped_rows.uncorrectable",
    "remapped_rows.pending",
    "remapped_rows.failure",
    "temperature.gpu",
    "temperature.gpu.tlimit",
    "temperature.memory",
    "power.management",
    "power.draw",
    "power.draw.average",
    "power.draw.instant",
    "power.limit",
    "enforced.power.limit",
    "power.default_limit",
    "power.min_limit",
    "power.max_limit",
    "clocks.current.graphics",
    "clocks.current.sm",
    "clocks.current.memory",
    "clocks.current.video",
    "clocks.max.graphics",
    "clocks.max.sm",
    "clocks.max.memory",
    "mig.mode.current",
    "mig.mode.pending"};

constexpr std::string_view kReasonPrefix = "clocks_event_reasons.";

// Names must outlive the table; generated ECC names are kept here.
std::vector<std::string>& EccNames() {
  static auto* names = [] {
    auto* out = new std::vector<std::string>;
    for (const char* kind : {"corrected", "uncorrected"}) {
      for (const char* scope : {"volatile", "aggregate"}) {
        for (const char* where : {"device_memory", "dram", "register_file", "l1_cache", "l2_cache",
                                  "texture_memory", "cbu", "sram", "total"}) {
          out->push_back(std::string("ecc.errors.") + kind + "." + scope + "." + where);
        }
      }
    }
    return out;
  }();
  return *names;
}

GpuField MakeField(std::string_view name) {
  GpuField field;
  field.name = name;
  if (auto it = TextGetters().find(name); it != TextGetters().end()) {
    field.kind = GpuField::Kind::kText;
    field.getter = it->second;
    return field;
  }
  if (name.starts_with(kReasonPrefix)) {
    std::string_view suffix = name.substr(kReasonPrefix.size());
    for (const ClockReasonDef& reason : kClockReasonTable) {
      if (reason.smi_suffix == suffix) {
        field.kind = GpuField::Kind::kReason;
        field.reason_bit = reason.bit;
        return field;
      }
    }
  }
  if (std::optional<Metric> m = FindBySmiName(name)) {
    field.kind = GpuField::Kind::kMetric;
    field.metric = *m;
    field.unit = Def(*m).smi.unit;
  }
  return field;
}

// Old and short names nvidia-smi still accepts.
constexpr std::pair<std::string_view, std::string_view> kGpuAliases[] = {
    {"gpu_name", "name"},
    {"gpu_uuid", "uuid"},
    {"gpu_serial", "serial"},
    {"gpu_bus_id", "pci.bus_id"},
    {"clocks.gr", "clocks.current.graphics"},
    {"clocks.sm", "clocks.current.sm"},
    {"clocks.mem", "clocks.current.memory"},
    {"clocks.video", "clocks.current.video"},
    {"clocks.max.gr", "clocks.max.graphics"},
    {"clocks.max.mem", "clocks.max.memory"},
};
constexpr std::string_view kOldReasonPrefix = "clocks_throttle_reasons.";

constexpr std::pair<std::string_view, std::string_view> kAppAliases[] = {
    {"name", "process_name"},
    {"used_memory", "used_gpu_memory"},
};

std::vector<std::string_view> SplitList(std::string_view list) {
  std::vector<std::string_view> out;
  while (true) {
    std::size_t comma = list.find(',');
    out.push_back(base::Trim(list.substr(0, comma), " "));
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return out;
}

Status InvalidField(std::string_view name) {
  return Status::InvalidArgument("Field \"" + std::string(name) +
                                 "\" is not a valid field to query.");
}

template <typename Field, typename Find>
Result<std::vector<const Field*>> Resolve(std::string_view list, Find find) {
  std::vector<const Field*> out;
  for (std::string_view name : SplitList(list)) {
    const Field* field = find(name);
    if (field == nullptr) return InvalidField(name);
    out.push_back(field);
  }
  return out;
}

Opt FormatMetric(const SmiName& smi, double stored) {
  double v = Convert(stored, smi.scale);
  if (!std::isfinite(v) || std::fabs(v) > 9e18) return std::nullopt;
  char buf[64];
  switch (smi.format) {
    case SmiFormat::kWatts:
      std::snprintf(buf, sizeof(buf), "%.2f", v);
      return buf;
    case SmiFormat::kHex64:
      if (v < 0) return std::nullopt;
      return Printf("0x%016llX", static_cast<unsigned long long>(v));
    case SmiFormat::kPState:
      if (v < 0 || v > 15) return std::nullopt;
      return "P" + std::to_string(std::llround(v));
    case SmiFormat::kEnabled:
      return EnabledText(v != 0);
    case SmiFormat::kYesNo:
      return v != 0 ? "Yes" : "No";
    case SmiFormat::kNone:
    case SmiFormat::kInteger:
      break;
  }
  return std::to_string(std::llround(v));
}

}  // namespace

const std::vector<GpuField>& GpuFields() {
  static const auto* fields = [] {
    auto* out = new std::vector<GpuField>;
    std::set<std::string_view> listed;
    for (std::string_view name : kGpuFieldOrder) {
      if (name != kEccMarker) {
        out->push_back(MakeField(name));
        listed.insert(name);
        continue;
      }
      for (const std::string& ecc : EccNames()) {
        out->push_back(MakeField(ecc));
        listed.insert(ecc);
      }
    }
    // A catalog row with an nvidia-smi name is queryable without an edit
    // here; the reference order above only places it in --help-query-gpu.
    for (const MetricDef& def : kCatalog) {
      if (!def.smi.name.empty() && !listed.contains(def.smi.name)) {
        out->push_back(MakeField(def.smi.name));
        listed.insert(def.smi.name);
      }
    }
    return out;
  }();
  return *fields;
}

const std::vector<AppField>& AppFields() {
  static const auto* fields = new std::vector<AppField>{
      {"timestamp", ""}, {"gpu_name", ""}, {"gpu_bus_id", ""},   {"gpu_serial", ""},
      {"gpu_uuid", ""},  {"pid", ""},      {"process_name", ""}, {"used_gpu_memory", "MiB"},
  };
  return *fields;
}

const GpuField* FindGpuField(std::string_view name) {
  std::string canonical(name);
  for (const auto& [alias, target] : kGpuAliases) {
    if (name == alias) canonical = target;
  }
  if (name.starts_with(kOldReasonPrefix)) {
    canonical = std::string(kReasonPrefix) + std::string(name.substr(kOldReasonPrefix.size()));
  }
  for (const GpuField& field : GpuFields()) {
    if (field.name == canonical) return &field;
  }
  return nullptr;
}

const AppField* FindAppField(std::string_view name) {
  for (const auto& [alias, target] : kAppAliases) {
    if (name == alias) name = target;
  }
  for (const AppField& field : AppFields()) {
    if (field.name == name) return &field;
  }
  return nullptr;
}

std::vector<std::string> GpuFieldAliases(std::string_view canonical) {
  std::vector<std::string> out;
  for (const auto& [alias, target] : kGpuAliases) {
    if (target == canonical) out.emplace_back(alias);
  }
  if (canonical.starts_with(kReasonPrefix)) {
    out.push_back(std::string(kOldReasonPrefix) +
                  std::string(canonical.substr(kReasonPrefix.size())));
  }
  return out;
}

std::vector<std::string> AppFieldAliases(std::string_view canonical) {
  std::vector<std::string> out;
  for (const auto& [alias, target] : kAppAliases) {
    if (target == canonical) out.emplace_back(alias);
  }
  return out;
}

Result<std::vector<const GpuField*>> ResolveGpuFields(std::string_view list) {
  return Resolve<GpuField>(list, FindGpuField);
}

Result<std::vector<const AppField*>> ResolveAppFields(std::string_view list) {
  return Resolve<AppField>(list, FindAppField);
}

std::optional<std::string> GpuFieldValue(const GpuField& field, const GpuRow& row) {
  switch (field.kind) {
    case GpuField::Kind::kText:
      return field.getter(row);
    case GpuField::Kind::kMetric:
      if (std::optional<double> v = Value(row, field.metric)) {
        return FormatMetric(Def(field.metric).smi, *v);
      }
      return std::nullopt;
    case GpuField::Kind::kReason:
      if (std::optional<double> v = Value(row, Metric::kClockReasons); v && *v >= 0) {
        bool active = (static_cast<uint64_t>(*v) & field.reason_bit) != 0;
        return active ? "Active" : "Not Active";
      }
      return std::nullopt;
    case GpuField::Kind::kNotAvailable:
      break;
  }
  return std::nullopt;
}

std::string FormatTimestamp(double unix_seconds) {
  double whole = std::floor(unix_seconds);
  auto millis = static_cast<int>(std::lround((unix_seconds - whole) * 1000.0));
  auto secs = static_cast<std::time_t>(whole);
  if (millis >= 1000) {
    millis -= 1000;
    ++secs;
  }
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[64];
  std::size_t n = std::strftime(buf, sizeof(buf), "%Y/%m/%d %H:%M:%S", &tm);
  std::snprintf(buf + n, sizeof(buf) - n, ".%03d", millis);
  return buf;
}

}  // namespace gpuscope::cli
