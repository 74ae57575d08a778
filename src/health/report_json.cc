#include "health/report_json.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "base/json_read.h"
#include "base/text.h"

namespace gpuscope {

// A holder and a process as the agent wrote them (gpuscope/attribution_json.h).
// Beside the types' own namespace, so that base::json_read's array reader
// finds them by argument-dependent lookup.
static bool Read(const nlohmann::json& j, Holder& out) {
  using base::json_read::Read;
  return j.is_object() && Read(j.value("namespace", nlohmann::json()), out.namespace_name) &&
         Read(j.value("pod", nlohmann::json()), out.pod) &&
         Read(j.value("container", nlohmann::json()), out.container) &&
         Read(j.value("hpc_job", nlohmann::json()), out.hpc_job) &&
         Read(j.value("workload", nlohmann::json()), out.workload);
}
static bool Read(const nlohmann::json& j, ProcessHolding& out) {
  using base::json_read::Read;
  return j.is_object() && Read(j.value("pid", nlohmann::json()), out.pid) &&
         Read(j.value("name", nlohmann::json()), out.name) &&
         Read(j.value("holder", nlohmann::json()), out.holder);
}

}  // namespace gpuscope

namespace gpuscope::health {
namespace {

using base::json_read::Read;
using nlohmann::json;

// The types of the health report (base/json_read.h reads the rest).
bool Read(const json& j, Verdict& out) {
  for (Verdict v : {Verdict::kOk, Verdict::kWarn, Verdict::kFail}) {
    if (j.is_string() && j.get_ref<const std::string&>() == VerdictName(v)) {
      out = v;
      return true;
    }
  }
  return false;
}
// XID counts by code: {"79": 2}.
bool Read(const json& j, std::map<unsigned, uint64_t>& out) {
  if (!j.is_object()) return false;
  for (const auto& [key, value] : j.items()) {
    unsigned xid = 0;
    auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), xid);
    if (ec != std::errc() || end != key.data() + key.size() || !Read(value, out[xid])) {
      return false;
    }
  }
  return true;
}
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

Status ReadCheck(const json& j, CheckResult& out) {
  if (!j.is_object()) return Status::InvalidArgument("not an object");
  out.evaluated = true;
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "verdict", out.verdict));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "evidence", out.evidence));
  return Take(j, "action", out.action);
}

Status ReadGpu(const json& j, GpuHealth& g, double& xid_window_seconds) {
  if (!j.is_object()) return Status::InvalidArgument("not an object");
  for (std::size_t i = 0; i < kAllChecks.size(); ++i) g.checks[i].check = kAllChecks[i];
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "gpu", g.gpu));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "uuid", g.uuid));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "pci_bus_id", g.pci_bus_id));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "model", g.model));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "verdict", g.verdict));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "lost", g.lost));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "stale", g.stale));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "holders", g.holders));
  GPUSCOPE_RETURN_IF_ERROR(Take(j, "processes", g.processes));
  auto checks = j.find("checks");
  if (checks == j.end() || !checks->is_object()) {
    return Status::InvalidArgument("\"checks\" is not an object");
  }
  for (Check c : kAllChecks) {
    auto it = checks->find(std::string(CheckName(c)));
    if (it == checks->end()) continue;  // not evaluated
    Status read = ReadCheck(*it, g.Get(c));
    if (!read.ok()) return read.Context("checks." + std::string(CheckName(c)));
  }
  auto xid = j.find("xid");
  if (xid == j.end() || !xid->is_object()) return Status::InvalidArgument("\"xid\" is missing");
  GPUSCOPE_RETURN_IF_ERROR(Take(*xid, "total", g.xid_totals));
  GPUSCOPE_RETURN_IF_ERROR(Take(*xid, "window", g.xid_window));
  GPUSCOPE_RETURN_IF_ERROR(Take(*xid, "window_seconds", xid_window_seconds));
  auto last = xid->find("last");
  if (last != xid->end() && !last->is_null()) {
    unsigned value = 0;
    if (!Read(*last, value)) return Status::InvalidArgument("\"xid.last\" has the wrong type");
    g.last_xid = value;
  }
  return Status::Ok();
}

}  // namespace

Result<HealthReport> ParseJson(std::string_view text) {
  // {"gpus": [{"checks": {"memory": {"evidence": [...]}}}]} nests 5 deep.
  if (std::string problem = base::JsonShapeProblem(text, 16, 1'000'000); !problem.empty()) {
    return Status::InvalidArgument("not a health report: it " + problem);
  }
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return Status::InvalidArgument("not a health report (expected a JSON object)");
  }
  HealthReport out;
  Status read = Take(j, "hostname", out.hostname);
  if (read.ok()) read = Take(j, "timestamp", out.timestamp);
  if (read.ok()) read = Take(j, "verdict", out.verdict);
  if (read.ok()) read = Take(j, "nvml_up", out.nvml_up);
  if (read.ok()) read = Take(j, "events_running", out.events_running);
  if (read.ok() && !out.nvml_up) read = Take(j, "nvml_error", out.nvml_error);
  if (!read.ok()) return read.Context("health report");
  auto gpus = j.find("gpus");
  if (gpus == j.end() || !gpus->is_array()) {
    return Status::InvalidArgument("health report: \"gpus\" is not an array");
  }
  for (std::size_t i = 0; i < gpus->size(); ++i) {
    Status gpu = ReadGpu((*gpus)[i], out.gpus.emplace_back(), out.xid_window_seconds);
    if (!gpu.ok()) return gpu.Context("health report: gpus[" + std::to_string(i) + "]");
  }
  return out;
}

void KeepGpus(HealthReport& report, const std::set<unsigned>& indices) {
  std::erase_if(report.gpus, [&](const GpuHealth& g) { return !indices.contains(g.gpu); });
  // The node verdict over the GPUs kept: the worst of theirs, fail while NVML is down.
  report.verdict = report.nvml_up ? Verdict::kOk : Verdict::kFail;
  for (const GpuHealth& g : report.gpus) report.verdict = std::max(report.verdict, g.verdict);
}

}  // namespace gpuscope::health
