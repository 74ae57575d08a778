#include "health/report_json.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>

#include "base/text.h"

namespace gpuscope::health {
namespace {

using nlohmann::json;

// Explicit type checks, never nlohmann's conversions: those throw on a wrong
// type or cast a number out of range, and this JSON comes from the network.
// Every text is printed on a terminal later: control characters (escape
// sequences, a newline faking a line) become U+FFFD here.
bool Read(const json& j, std::string& out) {
  if (!j.is_string()) return false;
  out = base::TerminalText(j.get_ref<const std::string&>());
  return true;
}
bool Read(const json& j, bool& out) {
  if (!j.is_boolean()) return false;
  out = j.get<bool>();
  return true;
}
bool Read(const json& j, double& out) {
  if (!j.is_number()) return false;
  out = j.get<double>();
  return true;
}
bool Read(const json& j, unsigned& out) {
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() > std::numeric_limits<unsigned>::max()) {
    return false;
  }
  out = static_cast<unsigned>(j.get<std::uint64_t>());
  return true;
}
bool Read(const json& j, uint64_t& out) {
  if (!j.is_number_unsigned()) return false;
  out = j.get<std::uint64_t>();
  return true;
}
bool Read(const json& j, Verdict& out) {
  for (Verdict v : {Verdict::kOk, Verdict::kWarn, Verdict::kFail}) {
    if (j.is_string() && j.get_ref<const std::string&>() == VerdictName(v)) {
      out = v;
      return true;
    }
  }
  return false;
}
bool Read(const json& j, std::vector<std::string>& out) {
  if (!j.is_array()) return false;
  for (const json& line : j) {
    if (!Read(line, out.emplace_back())) return false;
  }
  return true;
}
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
bool Read(const json& j, Holder& out) {
  return j.is_object() && Read(j.value("namespace", json()), out.namespace_name) &&
         Read(j.value("pod", json()), out.pod) &&
         Read(j.value("container", json()), out.container) &&
         Read(j.value("hpc_job", json()), out.hpc_job) &&
         Read(j.value("workload", json()), out.workload);
}
bool Read(const json& j, ProcessHolding& out) {
  return j.is_object() && Read(j.value("pid", json()), out.pid) &&
         Read(j.value("name", json()), out.name) && Read(j.value("holder", json()), out.holder);
}
template <typename T>
bool Read(const json& j, std::vector<T>& out) {
  if (!j.is_array()) return false;
  for (const json& item : j) {
    if (!Read(item, out.emplace_back())) return false;
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
