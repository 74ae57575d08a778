#include "web/api.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>

#include "gpuscope/attribution.h"
#include "gpuscope/attribution_json.h"
#include "health/report.h"
#include "health/report_json.h"
#include "web/gpu_state.h"
#include "web/params.h"

namespace gpuscope::web {
namespace {

using nlohmann::json;

// Every metric the device answered, by catalog key, in stored units.
json Values(const GpuSample& sample) {
  json values = json::object();
  for (const MetricDef& def : kCatalog) {
    if (sample.Has(def.id)) values[std::string(def.key)] = sample.Get(def.id);
  }
  return values;
}

// Names only with --process-names (AgentInfo::process_names).
json Processes(const GpuSample& sample, bool names) {
  json out = json::array();
  for (const ProcessInfo& p : sample.processes) {
    json j = {{"pid", p.pid}, {"name", names ? p.name : ""}};
    if (p.used_memory_bytes) j["used_memory_bytes"] = *p.used_memory_bytes;
    if (p.gpu_instance_id) j["gpu_instance_id"] = *p.gpu_instance_id;
    out.push_back(std::move(j));
  }
  return out;
}

// A vGPU host board's virtual GPUs, one object per VM's instance.
json Vgpus(const GpuSample& sample) {
  json out = json::array();
  for (const VgpuInstance& v : sample.vgpus) {
    json j = {{"id", v.id}, {"uuid", v.uuid}, {"type", v.type}, {"vm_id", v.vm_id}, {"vm", v.vm()}};
    auto put = [&j](const char* key, const auto& value) {
      if (value) j[key] = *value;
    };
    put("sm_utilization", v.sm_utilization);
    put("memory_utilization", v.memory_utilization);
    put("encoder_utilization", v.encoder_utilization);
    put("decoder_utilization", v.decoder_utilization);
    put("fb_used_bytes", v.fb_used_bytes);
    put("fb_total_bytes", v.fb_total_bytes);
    put("license_state", v.license_state);
    out.push_back(std::move(j));
  }
  return out;
}

// The whole GPU's verdict and the evidence of its checks that are not ok.
json HealthOf(const health::HealthReport* report, unsigned index) {
  if (report == nullptr) return nullptr;
  for (const health::GpuHealth& gpu : report->gpus) {
    if (gpu.gpu != index) continue;
    json problems = json::array();
    for (const health::CheckResult& check : gpu.checks) {
      if (!check.evaluated || check.verdict == health::Verdict::kOk) continue;
      problems.push_back({{"check", health::CheckName(check.check)},
                          {"verdict", health::VerdictName(check.verdict)},
                          {"evidence", check.evidence},
                          {"action", check.action}});
    }
    return {{"verdict", health::VerdictName(gpu.verdict)}, {"problems", problems}};
  }
  return nullptr;
}

// The strongest finding (findings are sorted by confidence) and the OOM ETA.
void AddBottleneck(const analysis::GpuDiagnosis* diagnosis, json& device) {
  device["bottleneck"] = nullptr;
  if (diagnosis == nullptr || diagnosis->findings.empty()) return;
  const analysis::Finding& top = diagnosis->findings.front();
  device["bottleneck"] = {{"kind", analysis::KindName(top.kind)},
                          {"confidence", top.confidence},
                          {"verdict", top.verdict},
                          {"since", top.since}};
  for (const analysis::Finding& f : diagnosis->findings) {
    if (f.oom_eta_seconds) device["oom_eta_seconds"] = *f.oom_eta_seconds;
  }
}

json Device(const View& view, std::size_t slot, bool process_names) {
  const Snapshot& s = *view.snapshot;
  const GpuInfo& info = s.gpus[slot];
  const GpuSample& sample = s.samples[slot];
  json d = {{"slot", slot},
            {"gpu", info.index},
            {"uuid", info.uuid},
            {"name", info.name},
            {"architecture", info.architecture},
            {"pci_bus_id", info.pci_bus_id},
            {"state", GpuStateName(sample.state)},
            {"state_reason", sample.state_reason},
            {"sampled_at", sample.sampled_at}};
  if (info.is_mig()) {
    d["mig"] = {{"gpu_instance_id", *info.gpu_instance_id},
                {"compute_instance_id", info.compute_instance_id.value_or(0)},
                {"profile", info.mig_profile},
                {"uuid", info.mig_uuid}};
  }
  d["holders"] = s.attribution ? json(s.attribution->Of(info)) : json::array();
  d["processes"] = Processes(sample, process_names);
  if (!sample.vgpus.empty()) d["vgpus"] = Vgpus(sample);  // only on vGPU host boards
  d["values"] = Values(sample);
  d["health"] = HealthOf(view.health.get(), info.index);
  const analysis::GpuDiagnosis* diagnosis = nullptr;
  for (const analysis::GpuDiagnosis& g : view.diagnoses) {
    if (g.slot == slot) diagnosis = &g;
  }
  AddBottleneck(diagnosis, d);
  d["kpis"] = json::array();
  for (const KpiReading& k : view.kpis) {
    if (k.slot != slot) continue;
    d["kpis"].push_back({{"kpi", k.summary.kpi},
                         {"family", k.summary.family},
                         {"workload", k.summary.workload},
                         {"count", k.summary.count},
                         {"sum", k.summary.sum}});
  }
  return d;
}

json ClockReasons() {
  json out = json::array();
  for (const ClockReasonDef& r : kClockReasonTable) {
    out.push_back({{"bit", r.bit}, {"reason", r.label}});
  }
  return out;
}

// Shortest text that reads back as the same float (the window stores floats).
void AppendNumber(std::string& out, float value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, ec == std::errc() ? end : buf);
}

void AppendNumber(std::string& out, double value) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value);
  out.append(buf, ec == std::errc() ? end : buf);
}

// {"slot", "gpu", "gpu_instance_id"?, "t": [...], "series": {"key": [...]}}.
void AppendDeviceWindow(std::string& out, const Window& window, const Snapshot& snapshot,
                        std::size_t slot, const WindowQuery& q) {
  const GpuInfo& info = snapshot.gpus[slot];
  std::vector<WindowPoint> points = window.Points(slot, q.since);
  while (!points.empty() && points.front().t <= q.since) points.erase(points.begin());
  out += fmt::format("{{\"slot\":{},\"gpu\":{}", slot, info.index);
  if (info.is_mig()) out += fmt::format(",\"gpu_instance_id\":{}", *info.gpu_instance_id);
  out += ",\"t\":[";
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (i) out += ',';
    AppendNumber(out, points[i].t);
  }
  out += "],\"series\":{";
  for (std::size_t m = 0; m < q.metrics.size(); ++m) {
    out += fmt::format("{}\"{}\":[", m ? "," : "", Def(q.metrics[m]).key);
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (i) out += ',';
      if (points[i].Has(q.metrics[m])) {
        AppendNumber(out, points[i].values[Index(q.metrics[m])]);
      } else {
        out += "null";
      }
    }
    out += ']';
  }
  out += "}}";
}

Result<std::vector<Metric>> ParseMetrics(std::string_view list) {
  if (list.empty())
    return Status::InvalidArgument(
        "metrics: missing (catalog keys, e.g. "
        "metrics=gpu_util,memory_used)");
  std::vector<Metric> out;
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view key = list.substr(start, comma - start);
    start = comma + 1;
    if (key.empty()) return Status::InvalidArgument("metrics: an empty name in the list");
    std::optional<Metric> metric = FindByKey(key);
    if (!metric) {
      std::string shown(key.substr(0, 64));
      for (char& c : shown) c = (c >= 0x20 && c < 0x7f) ? c : '?';
      return Status::InvalidArgument(fmt::format(
          "metrics: unknown metric '{}' (the keys of docs/metrics.md, e.g. gpu_util)", shown));
    }
    if (std::find(out.begin(), out.end(), *metric) == out.end()) out.push_back(*metric);
  }
  return out;
}

Result<double> ParseSince(std::string_view text) {
  if (text.empty()) return 0.0;
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || !(value >= 0) || value > 1e11) {
    return Status::InvalidArgument("since: not a unix time in seconds (e.g. since=1764633600.5)");
  }
  return value;
}

}  // namespace

std::string GpusJson(const View& view, const AgentInfo& agent) {
  const Snapshot& s = *view.snapshot;
  json devices = json::array();
  for (std::size_t slot = 0; slot < s.gpus.size() && slot < s.samples.size(); ++slot) {
    devices.push_back(Device(view, slot, agent.process_names));
  }
  json out = {
      {"hostname", s.system.hostname},
      {"timestamp", s.timestamp},
      {"sequence", s.sequence},
      {"nvml_up", s.nvml_up},
      {"nvml_error", s.nvml_error},
      {"driver_version", s.system.driver_version},
      {"cuda_version", s.system.cuda_version},
      {"agent", {{"version", agent.version}, {"source", agent.source}, {"metrics", agent.metrics}}},
      {"interval_seconds", agent.interval_seconds},
      {"window_seconds", agent.window_seconds},
      {"health", view.health ? json(health::VerdictName(view.health->verdict)) : json()},
      {"clock_reasons", ClockReasons()},
      {"devices", devices}};
  return out.dump() + "\n";
}

Result<WindowQuery> ParseWindowQuery(const http::Request& request, const Snapshot& snapshot) {
  GPUSCOPE_RETURN_IF_ERROR(CheckParameters(request, {"gpu", "gi", "metrics", "since"}));
  WindowQuery q;
  const std::string_view gpu = request.QueryValue("gpu");
  if (gpu.empty()) return Status::InvalidArgument("gpu: missing (an NVML index, or all)");
  Result<std::vector<std::size_t>> slots =
      SelectDevices(gpu, request.QueryValue("gi"), snapshot, true);
  if (!slots.ok()) return slots.status();
  q.slots = std::move(*slots);
  q.all = gpu == "all";
  Result<std::vector<Metric>> metrics = ParseMetrics(request.QueryValue("metrics"));
  if (!metrics.ok()) return metrics.status();
  q.metrics = std::move(*metrics);
  Result<double> since = ParseSince(request.QueryValue("since"));
  if (!since.ok()) return since.status();
  q.since = *since;
  return q;
}

std::string WindowJson(const Window& window, const Snapshot& snapshot, const WindowQuery& query,
                       const AgentInfo& agent) {
  std::string out = "{\"timestamp\":";
  AppendNumber(out, snapshot.timestamp);
  out += ",\"window_seconds\":";
  AppendNumber(out, agent.window_seconds);
  out += query.all ? ",\"devices\":[" : ",";
  for (std::size_t i = 0; i < query.slots.size(); ++i) {
    if (i) out += ',';
    std::string device;
    AppendDeviceWindow(device, window, snapshot, query.slots[i], query);
    // A single device's fields sit in the top object: strip its braces.
    out += query.all ? device : device.substr(1, device.size() - 2);
  }
  out += query.all ? "]}\n" : "}\n";
  return out;
}

Result<std::string> DiagnosisBody(const http::Request& request, const View& view, bool* is_text) {
  GPUSCOPE_RETURN_IF_ERROR(CheckParameters(request, {"gpu", "gi", "id", "format"}));
  const std::string_view format = request.QueryValue("format");
  if (!format.empty() && format != "json" && format != "text") {
    return Status::InvalidArgument("format: json or text");
  }
  *is_text = format == "text";
  std::vector<analysis::GpuDiagnosis> chosen(view.diagnoses.begin(), view.diagnoses.end());
  for (analysis::GpuDiagnosis& d : chosen) {
    std::vector<analysis::KpiSummary> kpis;
    for (const KpiReading& k : view.kpis) {
      if (k.slot == d.slot) kpis.push_back(k.summary);
    }
    analysis::AddKpis(d, std::move(kpis));
  }
  const std::string_view gpu = request.QueryValue("gpu");
  const std::string_view ids = request.QueryValue("id");
  if (!ids.empty() && (!gpu.empty() || !request.QueryValue("gi").empty())) {
    return Status::InvalidArgument("id: not with gpu or gi");
  }
  if (!gpu.empty() || !request.QueryValue("gi").empty() || !ids.empty()) {
    Result<std::vector<std::size_t>> slots =
        ids.empty() ? SelectDevices(gpu, request.QueryValue("gi"), *view.snapshot, false)
                    : SelectSmiIds(ids, *view.snapshot);
    if (!slots.ok()) return slots.status();
    std::erase_if(chosen, [&](const analysis::GpuDiagnosis& d) {
      return std::find(slots->begin(), slots->end(), d.slot) == slots->end();
    });
  }
  return *is_text ? analysis::FormatText(chosen) : analysis::FormatJson(chosen);
}

Result<std::string> HealthBody(const http::Request& request, const View& view) {
  GPUSCOPE_RETURN_IF_ERROR(CheckParameters(request, {"id"}));
  if (!view.health) return Status::Unavailable("no sampling cycle has completed yet");
  const std::string_view ids = request.QueryValue("id");
  if (ids.empty()) return health::FormatJson(*view.health);
  Result<std::vector<std::size_t>> slots =
      SelectSmiIds(ids, *view.snapshot, /*mig_selects_gpu=*/true);
  if (!slots.ok()) return slots.status();
  std::set<unsigned> gpus;
  for (std::size_t slot : *slots) gpus.insert(view.snapshot->gpus[slot].index);
  health::HealthReport narrowed = *view.health;
  health::KeepGpus(narrowed, gpus);
  return health::FormatJson(narrowed);
}

}  // namespace gpuscope::web
