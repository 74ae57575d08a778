#include "serve/snapshot_json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <type_traits>
#include <utility>

#include "base/json_read.h"
#include "base/text.h"
#include "gpuscope/attribution.h"
#include "gpuscope/attribution_json.h"
#include "web/gpu_state.h"

namespace gpuscope::serve {
namespace {

using nlohmann::json;

// A snapshot of 8 GPUs with 7 MIG instances each and their processes holds
// some 20 000 values; the cap keeps a hostile body from costing gigabytes.
constexpr std::size_t kMaxValues = 2'000'000;
constexpr std::size_t kMaxDepth = 8;  // devices[].sample.processes[].{...}

// ---- writing ----

template <typename T>
json Opt(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

// A non-finite double has no JSON form: it is sent as absent.
json Finite(const std::optional<double>& value) {
  return value && std::isfinite(*value) ? json(*value) : json(nullptr);
}

json InfoJson(const GpuInfo& g) {
  return {{"index", g.index},
          {"uuid", g.uuid},
          {"name", g.name},
          {"serial", g.serial},
          {"pci_bus_id", g.pci_bus_id},
          {"pci_domain", g.pci_domain},
          {"pci_bus", g.pci_bus},
          {"pci_device", g.pci_device},
          {"pci_device_id", g.pci_device_id},
          {"pci_sub_system_id", g.pci_sub_system_id},
          {"minor_number", g.minor_number},
          {"architecture", g.architecture},
          {"compute_capability", g.compute_capability},
          {"vbios_version", g.vbios_version},
          {"brand", g.brand},
          {"persistence_mode", Opt(g.persistence_mode)},
          {"display_mode", Opt(g.display_mode)},
          {"compute_mode", Opt(g.compute_mode)},
          {"power_management_mode", Opt(g.power_management_mode)},
          {"nvlink_count", g.nvlink_count},
          {"gpm_supported", g.gpm_supported},
          {"mig_enabled", g.mig_enabled},
          {"mig_capable", g.mig_capable},
          {"mig_mode_pending", Opt(g.mig_mode_pending)},
          {"gpu_instance_id", Opt(g.gpu_instance_id)},
          {"compute_instance_id", Opt(g.compute_instance_id)},
          {"mig_uuid", g.mig_uuid},
          {"mig_profile", g.mig_profile},
          {"inforom_image", g.inforom_image},
          {"inforom_oem", g.inforom_oem},
          {"inforom_ecc", g.inforom_ecc},
          {"inforom_power", g.inforom_power}};
}

json ProcessJson(const ProcessInfo& p, bool names) {
  return {{"pid", p.pid},
          {"name", names ? p.name : std::string()},
          {"used_memory_bytes", Opt(p.used_memory_bytes)},
          {"gpu_instance_id", Opt(p.gpu_instance_id)},
          {"compute_instance_id", Opt(p.compute_instance_id)},
          {"kinds", p.kinds},
          {"sm_utilization", Finite(p.sm_utilization)},
          {"memory_utilization", Finite(p.memory_utilization)},
          {"sm_share", Finite(p.sm_share)}};
}

json VgpuJson(const VgpuInstance& v) {
  return {{"id", v.id},
          {"uuid", v.uuid},
          {"vm_id", v.vm_id},
          {"vm_name", v.vm_name},
          {"type", v.type},
          {"fb_total_bytes", Opt(v.fb_total_bytes)},
          {"fb_used_bytes", Opt(v.fb_used_bytes)},
          {"license_state", Opt(v.license_state)},
          {"sm_utilization", Finite(v.sm_utilization)},
          {"memory_utilization", Finite(v.memory_utilization)},
          {"encoder_utilization", Finite(v.encoder_utilization)},
          {"decoder_utilization", Finite(v.decoder_utilization)}};
}

json SampleJson(const GpuSample& s, bool names) {
  json values = json::object();
  for (const MetricDef& def : kCatalog) {
    if (s.Has(def.id) && std::isfinite(s.Get(def.id))) values[std::string(def.key)] = s.Get(def.id);
  }
  json nvlink = json::array();
  for (const NvLinkLink& l : s.nvlink) {
    nvlink.push_back({{"link", l.link},
                      {"active", l.active},
                      {"replay", Opt(l.replay)},
                      {"recovery", Opt(l.recovery)},
                      {"crc_flit", Opt(l.crc_flit)},
                      {"crc_data", Opt(l.crc_data)}});
  }
  json xids = json::object();
  for (const auto& [xid, count] : s.xid_counts) xids[std::to_string(xid)] = count;
  json processes = json::array();
  for (const ProcessInfo& p : s.processes) processes.push_back(ProcessJson(p, names));
  json vgpus = json::array();
  for (const VgpuInstance& v : s.vgpus) vgpus.push_back(VgpuJson(v));
  json call_errors = json::array();
  for (const auto& [call, count] : s.call_errors) {
    call_errors.push_back({{"call", call.first}, {"code", call.second}, {"count", count}});
  }
  return {{"state", web::GpuStateName(s.state)},
          {"state_reason", s.state_reason},
          {"sampled_at", s.sampled_at},
          {"values", std::move(values)},
          {"nvlink", std::move(nvlink)},
          {"fabric_cluster_uuid", s.fabric_cluster_uuid},
          {"xid_counts", std::move(xids)},
          {"processes", std::move(processes)},
          {"process_sm_measured", s.process_sm_measured},
          {"vgpus", std::move(vgpus)},
          {"vgpu_scheduler_policy", Opt(s.vgpu_scheduler_policy)},
          {"call_errors", std::move(call_errors)}};
}

// Whose work each device and process serves: what the renderers show. The
// sources' states and errors (paths, API server answers) stay on the agent's
// /metrics and logs.
json AttributionJson(const Attribution& a) {
  json holders = json::object();
  for (const auto& [key, list] : a.holders) holders[key] = list;
  json processes = json::object();
  for (const auto& [pid, holder] : a.processes) processes[std::to_string(pid)] = holder;
  return {{"holders", std::move(holders)}, {"processes", std::move(processes)}};
}

// ---- reading ----
// Explicit type checks, never nlohmann's conversions (they throw on a wrong
// type or cast out of range); every text becomes terminal-safe.

using base::json_read::Read;  // text, bool, finite double, uint64 (base/json_read.h)

template <typename T>
requires(std::is_unsigned_v<T> && !std::is_same_v<T, uint64_t> &&
         !std::is_same_v<T, bool>) bool Read(const json& j, T& out) {
  uint64_t wide = 0;
  if (!Read(j, wide) || wide > std::numeric_limits<T>::max()) return false;
  out = static_cast<T>(wide);
  return true;
}
template <typename T>
bool Read(const json& j, std::optional<T>& out) {
  if (j.is_null()) {
    out.reset();
    return true;
  }
  return Read(j, out.emplace());
}
bool Read(const json& j, Holder& out);

// Reads j[key] into `out`; an error naming the key when absent or mistyped.
template <typename T>
Status Take(const json& j, const char* key, T& out) {
  auto it = j.find(key);
  if (it == j.end()) return Status::InvalidArgument(std::string("missing \"") + key + "\"");
  if (!Read(*it, out)) {
    return Status::InvalidArgument(std::string("\"") + key + "\" has the wrong type");
  }
  return Status::Ok();
}

// j[key] as an array or object (`want_array`); an error naming it otherwise.
Result<const json*> Member(const json& j, const char* key, bool want_array) {
  auto it = j.find(key);
  if (it == j.end() || (want_array ? !it->is_array() : !it->is_object())) {
    return Status::InvalidArgument(std::string("\"") + key + "\" is not " +
                                   (want_array ? "an array" : "an object"));
  }
  return &*it;
}

bool Read(const json& j, Holder& out) {
  return j.is_object() && Take(j, "namespace", out.namespace_name).ok() &&
         Take(j, "pod", out.pod).ok() && Take(j, "container", out.container).ok() &&
         Take(j, "hpc_job", out.hpc_job).ok() && Take(j, "workload", out.workload).ok();
}

// Each element of the array j[key], read by `read`; errors name key[i].
template <typename Fn>
Status EachOf(const json& j, const char* key, Fn read) {
  Result<const json*> array = Member(j, key, true);
  if (!array.ok()) return array.status();
  for (std::size_t i = 0; i < (*array)->size(); ++i) {
    const json& item = (**array)[i];
    Status status = item.is_object() ? read(item) : Status::InvalidArgument("not an object");
    if (!status.ok()) return status.Context(std::string(key) + "[" + std::to_string(i) + "]");
  }
  return Status::Ok();
}

Result<unsigned> ParseUnsignedKey(const std::string& key) {
  unsigned value = 0;
  auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), value);
  if (ec != std::errc() || end != key.data() + key.size()) {
    // Appended, not "\"" + ...: GCC 12 at -O3 reads that as an overlapping
    // memcpy (-Werror=restrict, a false positive).
    std::string message = "\"";
    message.append(base::TerminalText(key)).append("\" is not a number");
    return Status::InvalidArgument(message);
  }
  return value;
}

Status ReadInfo(const json& j, GpuInfo& g) {
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "index", g.index));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "uuid", g.uuid));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "name", g.name));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "serial", g.serial));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pci_bus_id", g.pci_bus_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pci_domain", g.pci_domain));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pci_bus", g.pci_bus));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pci_device", g.pci_device));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pci_device_id", g.pci_device_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pci_sub_system_id", g.pci_sub_system_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "minor_number", g.minor_number));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "architecture", g.architecture));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "compute_capability", g.compute_capability));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "vbios_version", g.vbios_version));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "brand", g.brand));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "persistence_mode", g.persistence_mode));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "display_mode", g.display_mode));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "compute_mode", g.compute_mode));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "power_management_mode", g.power_management_mode));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "nvlink_count", g.nvlink_count));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "gpm_supported", g.gpm_supported));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "mig_enabled", g.mig_enabled));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "mig_capable", g.mig_capable));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "mig_mode_pending", g.mig_mode_pending));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "gpu_instance_id", g.gpu_instance_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "compute_instance_id", g.compute_instance_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "mig_uuid", g.mig_uuid));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "mig_profile", g.mig_profile));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "inforom_image", g.inforom_image));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "inforom_oem", g.inforom_oem));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "inforom_ecc", g.inforom_ecc));
  return Take(j, "inforom_power", g.inforom_power);
}

Status ReadProcess(const json& j, ProcessInfo& p) {
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pid", p.pid));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "name", p.name));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "used_memory_bytes", p.used_memory_bytes));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "gpu_instance_id", p.gpu_instance_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "compute_instance_id", p.compute_instance_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "kinds", p.kinds));
  if (p.kinds == 0 || p.kinds > (kComputeProcess | kGraphicsProcess | kMpsProcess)) {
    return Status::InvalidArgument("\"kinds\" is out of range");
  }
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "sm_utilization", p.sm_utilization));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "memory_utilization", p.memory_utilization));
  return Take(j, "sm_share", p.sm_share);
}

Status ReadVgpu(const json& j, VgpuInstance& v) {
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "id", v.id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "uuid", v.uuid));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "vm_id", v.vm_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "vm_name", v.vm_name));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "type", v.type));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "fb_total_bytes", v.fb_total_bytes));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "fb_used_bytes", v.fb_used_bytes));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "license_state", v.license_state));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "sm_utilization", v.sm_utilization));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "memory_utilization", v.memory_utilization));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "encoder_utilization", v.encoder_utilization));
  return Take(j, "decoder_utilization", v.decoder_utilization);
}

Status ReadSample(const json& j, GpuSample& s) {
  std::string state;
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "state", state));
  const GpuState states[] = {GpuState::kOk, GpuState::kLost, GpuState::kStale, GpuState::kError};
  const auto* known =
      std::find_if(std::begin(states), std::end(states),
                   [&state](GpuState candidate) { return web::GpuStateName(candidate) == state; });
  if (known == std::end(states)) {
    return Status::InvalidArgument("\"state\" is not ok, lost, stale or error");
  }
  s.state = *known;
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "state_reason", s.state_reason));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "sampled_at", s.sampled_at));
  Result<const json*> values = Member(j, "values", false);
  if (!values.ok()) return values.status();
  for (const auto& [key, value] : (*values)->items()) {
    std::optional<Metric> metric = FindByKey(key);
    if (!metric) continue;  // a newer agent's metric
    double v = 0;
    if (!Read(value, v)) {
      return Status::InvalidArgument("values.\"" + base::TerminalText(key) +
                                     "\" is not a finite number");
    }
    s.Set(*metric, v);
  }
  GPUSCOPE_RETURN_IF_ERROR(EachOf(j, "nvlink", [&s](const json& l) -> Status {
    NvLinkLink& link = s.nvlink.emplace_back();
    GPUSCOPE_RETURN_IF_ERROR(Take(l, "link", link.link));
    GPUSCOPE_RETURN_IF_ERROR(Take(l, "active", link.active));
    GPUSCOPE_RETURN_IF_ERROR(Take(l, "replay", link.replay));
    GPUSCOPE_RETURN_IF_ERROR(Take(l, "recovery", link.recovery));
    GPUSCOPE_RETURN_IF_ERROR(Take(l, "crc_flit", link.crc_flit));
    return Take(l, "crc_data", link.crc_data);
  }));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "fabric_cluster_uuid", s.fabric_cluster_uuid));
  Result<const json*> xids = Member(j, "xid_counts", false);
  if (!xids.ok()) return xids.status();
  for (const auto& [key, value] : (*xids)->items()) {
    Result<unsigned> xid = ParseUnsignedKey(key);
    if (!xid.ok()) return xid.status().Context("xid_counts");
    if (!Read(value, s.xid_counts[*xid])) {
      return Status::InvalidArgument("xid_counts.\"" + key + "\" is not a count");
    }
  }
  GPUSCOPE_RETURN_IF_ERROR(EachOf(
      j, "processes", [&s](const json& p) { return ReadProcess(p, s.processes.emplace_back()); }));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "process_sm_measured", s.process_sm_measured));
  GPUSCOPE_RETURN_IF_ERROR(
      EachOf(j, "vgpus", [&s](const json& v) { return ReadVgpu(v, s.vgpus.emplace_back()); }));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "vgpu_scheduler_policy", s.vgpu_scheduler_policy));
  return EachOf(j, "call_errors", [&s](const json& e) -> Status {
    std::string call, code;
    uint64_t count = 0;
    GPUSCOPE_RETURN_IF_ERROR(Take(e, "call", call));
    GPUSCOPE_RETURN_IF_ERROR(Take(e, "code", code));
    GPUSCOPE_RETURN_IF_ERROR(Take(e, "count", count));
    s.call_errors[{call, code}] = count;
    return Status::Ok();
  });
}

Status ReadAttribution(const json& j, Attribution& a) {
  Result<const json*> holders = Member(j, "holders", false);
  if (!holders.ok()) return holders.status();
  for (const auto& [key, list] : (*holders)->items()) {
    std::vector<Holder>& out = a.holders[base::TerminalText(key)];
    if (!list.is_array()) return Status::InvalidArgument("holders of a device: not an array");
    for (const json& h : list) {
      if (!Read(h, out.emplace_back())) return Status::InvalidArgument("a holder is malformed");
    }
  }
  Result<const json*> processes = Member(j, "processes", false);
  if (!processes.ok()) return processes.status();
  for (const auto& [key, holder] : (*processes)->items()) {
    Result<unsigned> pid = ParseUnsignedKey(key);
    if (!pid.ok()) return pid.status().Context("attribution processes");
    if (!Read(holder, a.processes[*pid])) {
      return Status::InvalidArgument("the holder of pid " + key + " is malformed");
    }
  }
  return Status::Ok();
}

Status ReadBody(const json& j, RemoteSnapshot& out) {
  uint64_t version = 0;
  if (Status v = Take(j, "version", version); !v.ok() || version != kSnapshotVersion) {
    return Status::InvalidArgument("version " + (v.ok() ? std::to_string(version) : "unknown") +
                                   ", this gpuscope reads version " +
                                   std::to_string(kSnapshotVersion));
  }
  Result<const json*> agent = Member(j, "agent", false);
  if (!agent.ok()) return agent.status();
  SnapshotAgent& a = out.agent;
  GPUSCOPE_RETURN_IF_ERROR(Take(**agent, "simulated", a.simulated));
  GPUSCOPE_RETURN_IF_ERROR(Take(**agent, "scenario", a.scenario));
  GPUSCOPE_RETURN_IF_ERROR(Take(**agent, "process_names", a.process_names));
  GPUSCOPE_RETURN_IF_ERROR(Take(**agent, "processes_read", a.processes_read));
  auto snapshot = std::make_shared<Snapshot>();
  Snapshot& s = *snapshot;
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "sequence", s.sequence));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "timestamp", s.timestamp));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "collect_seconds", s.collect_seconds));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "overruns_total", s.overruns_total));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "nvml_up", s.nvml_up));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "nvml_error", s.nvml_error));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "nvml_calls", s.nvml_calls));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "nvml_calls_total", s.nvml_calls_total));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "slow_cycle", s.slow_cycle));
  Result<const json*> system = Member(j, "system", false);
  if (!system.ok()) return system.status();
  GPUSCOPE_RETURN_IF_ERROR(Take(**system, "driver_version", s.system.driver_version));
  GPUSCOPE_RETURN_IF_ERROR(Take(**system, "nvml_version", s.system.nvml_version));
  GPUSCOPE_RETURN_IF_ERROR(Take(**system, "cuda_version", s.system.cuda_version));
  GPUSCOPE_RETURN_IF_ERROR(Take(**system, "hostname", s.system.hostname));
  GPUSCOPE_RETURN_IF_ERROR(EachOf(j, "devices", [&s](const json& d) -> Status {
    Result<const json*> info = Member(d, "info", false);
    if (!info.ok()) return info.status();
    GPUSCOPE_RETURN_IF_ERROR(ReadInfo(**info, s.gpus.emplace_back()).Context("info"));
    Result<const json*> sample = Member(d, "sample", false);
    if (!sample.ok()) return sample.status();
    return ReadSample(**sample, s.samples.emplace_back()).Context("sample");
  }));
  auto attribution = j.find("attribution");
  if (attribution == j.end()) return Status::InvalidArgument("missing \"attribution\"");
  if (attribution->is_object()) {
    auto a = std::make_shared<Attribution>();
    GPUSCOPE_RETURN_IF_ERROR(ReadAttribution(*attribution, *a).Context("attribution"));
    s.attribution = std::move(a);
  } else if (!attribution->is_null()) {
    return Status::InvalidArgument("\"attribution\" is neither an object nor null");
  }
  auto verdicts = j.find("verdicts");
  if (verdicts == j.end() || !verdicts->is_array() || verdicts->size() > s.gpus.size()) {
    return Status::InvalidArgument("\"verdicts\" is not an array of one text per device");
  }
  for (const json& v : *verdicts) {
    if (!Read(v, out.verdicts.emplace_back())) {
      return Status::InvalidArgument("\"verdicts\" holds a non-text");
    }
  }
  out.snapshot = std::move(snapshot);
  return Status::Ok();
}

}  // namespace

std::vector<std::string> TopVerdicts(std::span<const analysis::GpuDiagnosis> diagnoses,
                                     std::size_t slots, double min_span_seconds) {
  std::vector<std::string> out(slots);
  for (const analysis::GpuDiagnosis& d : diagnoses) {
    if (d.slot >= out.size()) continue;
    if (!d.findings.empty()) {
      out[d.slot] = d.findings.front().verdict;
    } else if (d.span_seconds < min_span_seconds) {
      out[d.slot] = "(gathering: needs " + std::to_string(static_cast<int>(min_span_seconds)) +
                    " s of samples)";
    }
  }
  return out;
}

std::string SnapshotJson(const Snapshot& snapshot, const SnapshotAgent& agent,
                         const std::vector<std::string>& verdicts) {
  const Snapshot& s = snapshot;
  json devices = json::array();
  for (std::size_t i = 0; i < s.gpus.size() && i < s.samples.size(); ++i) {
    devices.push_back(
        {{"info", InfoJson(s.gpus[i])}, {"sample", SampleJson(s.samples[i], agent.process_names)}});
  }
  json body = {{"version", kSnapshotVersion},
               {"agent",
                {{"simulated", agent.simulated},
                 {"scenario", agent.scenario},
                 {"process_names", agent.process_names},
                 {"processes_read", agent.processes_read}}},
               {"sequence", s.sequence},
               {"timestamp", s.timestamp},
               {"collect_seconds", s.collect_seconds},
               {"overruns_total", s.overruns_total},
               {"nvml_up", s.nvml_up},
               {"nvml_error", s.nvml_error},
               {"nvml_calls", s.nvml_calls},
               {"nvml_calls_total", s.nvml_calls_total},
               {"slow_cycle", s.slow_cycle},
               {"system",
                {{"driver_version", s.system.driver_version},
                 {"nvml_version", s.system.nvml_version},
                 {"cuda_version", s.system.cuda_version},
                 {"hostname", s.system.hostname}}},
               {"devices", std::move(devices)},
               {"attribution", s.attribution ? AttributionJson(*s.attribution) : json(nullptr)},
               {"verdicts", verdicts.size() <= s.gpus.size() ? json(verdicts) : json::array()}};
  // Names and texts from NVML may hold invalid UTF-8: replaced, never thrown on.
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<RemoteSnapshot> ParseSnapshotJson(std::string_view text) {
  if (std::string problem = base::JsonShapeProblem(text, kMaxDepth, kMaxValues); !problem.empty()) {
    return Status::InvalidArgument("not a gpuscope snapshot: it " + problem);
  }
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("not a gpuscope snapshot (expected a JSON object)");
  }
  RemoteSnapshot out;
  Status read = ReadBody(j, out);
  if (!read.ok()) return read.Context("snapshot");
  return out;
}

}  // namespace gpuscope::serve
