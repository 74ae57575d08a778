#include "export/metrics_doc.h"

#include "base/text.h"
#include "export/family_registry.h"
#include "export/profile.h"
#include "gpuscope/catalog.h"

namespace gpuscope::prom {
namespace {

constexpr std::string_view kNativeLabels = "gpu, uuid";

std::string_view CategoryName(Category category) {
  switch (category) {
    case Category::kInventory:
      return "inventory";
    case Category::kWork:
      return "work";
    case Category::kMemory:
      return "memory";
    case Category::kEnergy:
      return "energy";
    case Category::kHealth:
      return "health";
    case Category::kInterconnect:
      return "interconnect";
  }
  return "";
}

std::string_view TypeName(MetricType type) {
  return type == MetricType::kCounter ? "counter" : "gauge";
}

// Table cells: pipes escaped, empty shown as a dash.
std::string Cell(std::string_view text) {
  if (text.empty()) return "-";
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

std::string Code(std::string_view text) {
  return text.empty() ? "-" : base::Concat({"`", text, "`"});
}

std::string SmiCell(const SmiName& smi) {
  if (smi.name.empty()) return "-";
  std::string cell = "`" + std::string(smi.name) + "`";
  if (!smi.unit.empty()) cell += " (" + std::string(smi.unit) + ")";
  return cell;
}

std::string DcgmCell(const DcgmName& dcgm) {
  std::string cell = Code(dcgm.name);
  if (dcgm.name.empty()) return cell;
  cell += " (" + std::string(TypeName(dcgm.type)) + ")";
  if (!dcgm.alias.empty()) cell += ", also " + Code(dcgm.alias);
  return cell;
}

std::string_view GroupName(FamilyGroup group) {
  switch (group) {
    case FamilyGroup::kGpu:
      return "gpu";
    case FamilyGroup::kSelf:
      return "self";
    case FamilyGroup::kHealth:
      return "health";
    case FamilyGroup::kDiagnosis:
      return "diagnosis";
  }
  return "";
}

std::string_view FamilyTypeName(FamilyType type) {
  switch (type) {
    case FamilyType::kCounter:
      return "counter";
    case FamilyType::kInfo:
      return "info";
    case FamilyType::kUnknown:
      return "unknown";
    case FamilyType::kHistogram:
      return "histogram";
    case FamilyType::kGauge:
      break;
  }
  return "gauge";
}

std::string RegistryLabels(const BuiltinFamily& f) {
  std::string labels;
  if (f.base == LabelBase::kNative) labels = kNativeLabels;
  if (f.base == LabelBase::kDcgm) labels = "dcgm-exporter's";
  if (!f.labels.empty()) labels += (labels.empty() ? "" : ", ") + std::string(f.labels);
  return labels.empty() ? "-" : labels;
}

std::string BuiltinTableRow(const BuiltinFamily& f) {
  return "| " + Code(f.name) + " | " + std::string(FamilyTypeName(f.type)) + " | " +
         RegistryLabels(f) + " | " + std::string(GroupName(f.group)) + " | " + Cell(f.help) +
         " |\n";
}

constexpr std::string_view kCatalogHeader =
    "| native name | type | labels | lean profile | dcgm-exporter name | nvidia-smi | source | "
    "category | help |\n"
    "|---|---|---|---|---|---|---|---|---|\n";

constexpr std::string_view kBuiltinHeader =
    "\n## Families beyond the catalog\n\n"
    "From the family registry (`src/export/builtin_families.h`). Group `gpu`: derived from the\n"
    "snapshot by the renderer; `self`: the agent about itself (rendered with every metrics\n"
    "set); `health`: the health module; `diagnosis`: the diagnosis monitor.\n\n"
    "| name | type | labels | group | help |\n"
    "|---|---|---|---|---|\n";

constexpr std::string_view kIntro = R"(# gpuscope metrics

Generated from the metric catalog (`src/collect/catalog_rows.h`) and the family registry
(`src/export/builtin_families.h`) by `gpuscope docs metrics`; do not edit by hand.

`gpuscope serve` exports two sets of families (`--metrics dcgm|native|both`, default both):

- **dcgm-exporter names** (`DCGM_FI_*`), in dcgm-exporter's units, for existing dashboards and
  alerts. Which ones is decided by the counters file (`-f`, default: dcgm-exporter's
  `default-counters.csv`), in file order, with the file's type and help. Labels, in this order:
  `gpu`, `UUID`, `pci_bus_id`, `device` (`nvidia<index>`, as dcgm-exporter), `modelName`, on MIG
  instances `GPU_I_PROFILE` and `GPU_I_ID` (`gpu` and `UUID` are then the parent's), `Hostname`
  (removed with `-n`; `--hostname-label hostname` gives the lower-case spelling of dcgm-exporter's
  development branch), then the counters file's `label` fields in name order (e.g.
  `DCGM_FI_DRIVER_VERSION`), then attribution labels; `DCGM_FI_DEV_XID_ERRORS` adds `err_code` and
  `err_msg`.
- **native names** (`gpuscope_*`), in base units (seconds, bytes, watts, joules, hertz, ratios
  0..1), counters ending in `_total`. Labels: `gpu` (NVML index), `uuid` (the MIG UUID on a MIG
  instance), on MIG instances `gpu_instance`, `mig_profile` (and `compute_instance` when set),
  then the row's fixed labels below. Identity (model, PCI bus id, driver, host) is in
  `gpuscope_gpu_info`; join on `uuid`.

**Profiles** (`--profile`, default `lean`). The lean profile exports what the shipped dashboards,
alert and recording rules read, at most 60 series per H100 with the default counters file: the
"lean profile" column says, per native row, whether it is exported `always`, `when non-zero`
(the first cycle its value is not 0, or for a counter the first cycle it has grown since the
agent started, since NVML's counters hold the board's history; from then on until the agent
restarts, so a series is created once and never flaps), `without GPM` (only on a GPU without GPM DRAM activity, for which
it stands in) or only in the `full` profile. In the lean profile
`gpuscope_gpu_health` and `gpuscope_bottleneck`/`gpuscope_bottleneck_confidence` are exported
when non-zero in the same way (a check that never warned, a kind never found, has no series),
`gpuscope_nvlink_link_active` and `gpuscope_nvlink_link_errors_total` only for links that were
down or counted an error since the agent started (`--nvlink-per-link`: every link), and
`gpuscope_gpu_last_sample_timestamp_seconds` not at all. `--profile full` exports every series.
Why, and what it costs a fleet: docs/scaling.md. The dcgm-exporter families are the same in both.

A metric the GPU does not support has no series (never 0). A lost GPU keeps only
`gpuscope_gpu_info`, `gpuscope_gpu_lost`, its last-sample time and XID counts; a stale one keeps
its last values with `gpuscope_collector_stale` 1 (rendered by the health module, with
`gpuscope_gpu_health`: 1 while an NVML call hangs, or when the GPU had no good read within the
staleness limit, 60 s by default). OpenMetrics (negotiated by `Accept`) declares a
counter `x_total` as family `x`, and a dcgm counter (no `_total`) as `unknown`.

**Label values** come partly from outside the agent: job ids (`--hpc-job-mapping-dir`), pod,
namespace, container and workload names, service names and point attributes of applications
(OTLP). A value longer than 256 bytes is cut to 236 bytes, at a UTF-8 character boundary, and
ends with `...#` and 16 hex digits of a 64-bit FNV-1a hash of the whole value, so two values
that differ only past the cut stay two series; the same value gives the same label on every
node. Before, a 60 KiB job id made `/metrics` 5.5 MB.

## vGPU: what is read on a host and in a guest

On a **vGPU host** (a board in virtualization mode 3) each slow cycle reads the board's virtual
GPUs (`nvmlDeviceGetActiveVgpus`; per instance `nvmlVgpuInstanceGetVmID`, `GetUUID`, `GetType`
with `nvmlVgpuTypeGetName` and `GetFramebufferSize`, `GetFbUsage`, `GetLicenseInfo_v2`; per
board `nvmlDeviceGetVgpuUtilization` and `nvmlDeviceGetVgpuSchedulerState`): one series per
instance in the `gpuscope_vgpu_*` families and `DCGM_FI_DEV_VGPU_MEMORY_USAGE` (MiB, as DCGM
gives it; written whatever the counters file lists), labelled with the instance (`vgpu`, DCGM:
`vgpu_id`), `vgpu_uuid`, `vgpu_type` and `vm_id`. The VM is the board's holder
(docs/attribution.md). In a **vGPU guest** (virtualization mode 2) the GPU is read as a whole
GPU, plus its licence (`nvmlDeviceGetGridLicensableFeatures_v4`):
`DCGM_FI_DEV_VGPU_LICENSE_STATUS` and `gpuscope_vgpu_license_state`, and the `license` check of
`gpuscope_gpu_health`. On bare metal none of these calls is made and no series appears.

## Counters file (`-f`)

Read as dcgm-exporter reads it (Go's CSV reader with `#` comments, then its counters rules):
`FIELD, type, help` per record; a comment has `#` in the first column; empty lines are
skipped; spaces (only spaces) around fields are trimmed; a field may be double-quoted right
after its comma; exactly 3 fields; type `gauge`, `counter` or `label` in lower case
(`histogram` and `summary` are accepted with a warning and served as gauges). A name is served
when it is a dcgm-exporter name (or alias, or go-dcgm legacy name such as `dcgm_gpu_temp`) in
the table below; a `label` field when it is one of `DCGM_FI_DRIVER_VERSION`,
`DCGM_FI_NVML_VERSION`, `DCGM_FI_DEV_BRAND`, `DCGM_FI_DEV_SERIAL`, `DCGM_FI_DEV_VBIOS_VERSION`,
`DCGM_FI_DEV_NAME`, `DCGM_FI_DEV_UUID`, `DCGM_FI_DEV_PCI_BUSID`, `DCGM_FI_DEV_MINOR_NUMBER`,
`DCGM_FI_DEV_INFOROM_IMAGE_VER`, `DCGM_FI_DEV_OEM_INFOROM_VER`, `DCGM_FI_DEV_ECC_INFOROM_VER`,
`DCGM_FI_DEV_POWER_INFOROM_VER`, `DCGM_FI_DEV_CUDA_COMPUTE_CAPABILITY` (written in name order,
as dcgm-exporter does; a value NVML cannot give leaves the label out);
`DCGM_EXP_XID_ERRORS_COUNT` and `DCGM_EXP_GPU_HEALTH_STATUS` are rendered by the health module
(`DCGM_EXP_CLOCK_EVENTS_COUNT` is not rendered yet and is skipped with a warning).
Where dcgm-exporter is lenient gpuscope accepts and warns: a field listed again (the first entry
is served, as in dcgm-exporter), a numeric field declared `label` or a string field declared
`gauge` (skipped). Real DCGM fields that need DCGM itself (the other vGPU fields, per-link
fields, `DCGM_EXP_P2P_STATUS`, ...) are skipped with a warning. Any other name is an error naming
the file and line. `DCGM_FI_DEV_XID_ERRORS` carries dcgm-exporter's `err_code` and `err_msg`.

## Catalog

)";

}  // namespace

std::string CatalogTableRow(const MetricDef& def) {
  const bool native = !def.native.name.empty();
  std::string labels = native ? std::string(kNativeLabels) : "-";
  if (!def.native.labels.empty()) labels += ", `" + std::string(def.native.labels) + "`";
  return "| " + Code(def.native.name) + " | " +
         (native ? std::string(TypeName(def.native.type)) : "-") + " | " + labels + " | " +
         (native ? std::string(LeanPolicyName(def.lean.policy)) : "-") + " | " +
         DcgmCell(def.dcgm) + " | " + SmiCell(def.smi) + " | " + Cell(SourceText(def)) + " | " +
         std::string(CategoryName(def.category)) + " | " + Cell(def.help) + " |\n";
}

std::string RenderMetricsDoc() {
  // One walk of the registry view: catalog rows fill the catalog table, the
  // families beyond the catalog the table after it.
  std::string catalog(kCatalogHeader), builtins(kBuiltinHeader);
  for (const FamilySource& source : kFamilySources) {
    if (source.row != nullptr) {
      catalog += CatalogTableRow(*source.row);
    } else {
      builtins += BuiltinTableRow(*source.builtin);
    }
  }
  return base::Concat({kIntro, catalog, builtins});
}

}  // namespace gpuscope::prom
