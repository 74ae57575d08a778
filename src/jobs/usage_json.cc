#include "jobs/usage_json.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <limits>
#include <map>
#include <string_view>
#include <utility>

#include "base/json_read.h"
#include "base/text.h"

namespace gpuscope::jobs {
namespace {

using base::json_read::Read;  // explicit type checks (base/json_read.h)
using nlohmann::json;

json DeviceToJson(const DeviceUsage& d) {
  json out = {{"device_key", d.device_key},
              {"uuid", d.uuid},
              {"gpu", d.gpu},
              {"hostname", d.hostname},
              {"mig_profile", d.mig_profile},
              {"held_seconds", d.held_seconds},
              {"busy_seconds", d.busy_seconds},
              {"idle_held_seconds", d.idle_held_seconds},
              {"throttled_seconds", d.throttled_seconds},
              {"throttle_reason_seconds", d.throttle_reason_seconds},
              {"memory_peak_bytes", d.memory_peak_bytes},
              {"memory_total_bytes", d.memory_total_bytes},
              {"first_seen", d.first_seen},
              {"last_seen", d.last_seen},
              {"split", d.split}};
  // Absent, never 0, when the GPU cannot tell (no GPM, no energy counter).
  out["sm_active_seconds"] = d.sm_active_known ? json(d.sm_active_seconds) : json(nullptr);
  out["tensor_active_seconds"] = d.tensor_known ? json(d.tensor_active_seconds) : json(nullptr);
  out["energy_joules"] = d.energy_known ? json(d.energy_joules) : json(nullptr);
  return out;
}

// Reads j[key] into `out`; false (and a message in `error`) when absent or mistyped.
template <typename T>
bool Take(const json& j, const char* key, T& out, std::string& error) {
  auto it = j.find(key);
  if (it == j.end()) {
    error = std::string("missing \"") + key + "\"";
    return false;
  }
  if (!Read(*it, out)) {
    error = std::string("\"") + key + "\" has the wrong type";
    return false;
  }
  return true;
}

// A nullable number: `known` false on null.
bool TakeOptional(const json& j, const char* key, double& out, bool& known, std::string& error) {
  auto it = j.find(key);
  if (it != j.end() && it->is_null()) {
    known = false;
    return true;
  }
  known = true;
  return Take(j, key, out, error);
}

// j[key] as an array: empty when absent or null; false when another type.
bool TakeList(const json& j, const char* key, const json*& out, std::string& error) {
  static const json kEmpty = json::array();
  auto it = j.find(key);
  out = it == j.end() || it->is_null() ? &kEmpty : &*it;
  if (out->is_array()) return true;
  error = std::string("\"") + key + "\" is not an array";
  return false;
}

Result<DeviceUsage> DeviceFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a device is not a JSON object");
  DeviceUsage d;
  std::string e;
  bool ok = Take(j, "device_key", d.device_key, e) && Take(j, "uuid", d.uuid, e) &&
            Take(j, "gpu", d.gpu, e) && Take(j, "hostname", d.hostname, e) &&
            Take(j, "mig_profile", d.mig_profile, e) &&
            Take(j, "held_seconds", d.held_seconds, e) &&
            Take(j, "busy_seconds", d.busy_seconds, e) &&
            Take(j, "idle_held_seconds", d.idle_held_seconds, e) &&
            Take(j, "throttled_seconds", d.throttled_seconds, e) &&
            Take(j, "throttle_reason_seconds", d.throttle_reason_seconds, e) &&
            Take(j, "memory_peak_bytes", d.memory_peak_bytes, e) &&
            Take(j, "memory_total_bytes", d.memory_total_bytes, e) &&
            Take(j, "first_seen", d.first_seen, e) && Take(j, "last_seen", d.last_seen, e) &&
            TakeOptional(j, "sm_active_seconds", d.sm_active_seconds, d.sm_active_known, e) &&
            TakeOptional(j, "tensor_active_seconds", d.tensor_active_seconds, d.tensor_known, e) &&
            TakeOptional(j, "energy_joules", d.energy_joules, d.energy_known, e);
  if (!ok) return Status::InvalidArgument("device: " + e);
  // Agents before the measured split split every shared GPU evenly.
  d.split = "even split";
  if (j.contains("split")) {
    const json& split = j["split"];
    constexpr std::string_view kSplits[] = {"", "sole holder", "measured", "even split", "mixed"};
    if (!split.is_string() || std::find(std::begin(kSplits), std::end(kSplits),
                                        split.get<std::string>()) == std::end(kSplits)) {
      return Status::InvalidArgument(
          "device: \"split\" is not one of sole holder, measured, "
          "even split, mixed");
    }
    d.split = split.get<std::string>();
  }
  return d;
}

}  // namespace

json UsageToJson(const JobUsage& u) {
  json devices = json::array();
  for (const DeviceUsage& d : u.devices) devices.push_back(DeviceToJson(d));
  json findings = json::array();
  for (const FindingSeen& f : u.findings) {
    findings.push_back(
        {{"kind", f.kind}, {"device_key", f.device_key}, {"first", f.first}, {"last", f.last}});
  }
  return {{"kind", u.kind},
          {"id", u.id},
          {"namespace", u.namespace_name},
          {"workload", u.workload},
          {"hpc_job", u.hpc_job},
          {"start", u.start},
          {"end", u.end ? json(*u.end) : json(nullptr)},
          {"devices", std::move(devices)},
          {"findings", std::move(findings)}};
}

Result<JobUsage> UsageFromJson(const json& j) {
  if (!j.is_object()) return Status::InvalidArgument("a job is not a JSON object");
  JobUsage u;
  std::string e;
  bool ok = Take(j, "kind", u.kind, e) && Take(j, "id", u.id, e) &&
            Take(j, "namespace", u.namespace_name, e) && Take(j, "workload", u.workload, e) &&
            Take(j, "hpc_job", u.hpc_job, e) && Take(j, "start", u.start, e);
  if (!ok) return Status::InvalidArgument("job: " + e);
  if (auto end = j.find("end"); end != j.end() && !end->is_null()) {
    if (!end->is_number()) return Status::InvalidArgument("job: \"end\" has the wrong type");
    u.end = end->get<double>();
  }
  const json *devices = nullptr, *findings = nullptr;
  if (!TakeList(j, "devices", devices, e) || !TakeList(j, "findings", findings, e)) {
    return Status::InvalidArgument("job: " + e);
  }
  for (const json& d : *devices) {
    Result<DeviceUsage> device = DeviceFromJson(d);
    if (!device.ok()) return device.status();
    u.devices.push_back(std::move(*device));
  }
  for (const json& f : *findings) {
    FindingSeen seen;
    if (!f.is_object()) return Status::InvalidArgument("a finding is not a JSON object");
    if (!(Take(f, "kind", seen.kind, e) && Take(f, "device_key", seen.device_key, e) &&
          Take(f, "first", seen.first, e) && Take(f, "last", seen.last, e))) {
      return Status::InvalidArgument("finding: " + e);
    }
    u.findings.push_back(std::move(seen));
  }
  return u;
}

std::string JobsBody(const std::vector<JobUsage>& jobs, const json& attribution) {
  json list = json::array();
  for (const JobUsage& u : jobs) list.push_back(UsageToJson(u));
  json out = {{"jobs", std::move(list)}};
  if (!attribution.is_null()) out["attribution"] = attribution;
  return out.dump() + "\n";
}

Result<std::vector<JobUsage>> ParseJobsBody(const std::string& body) {
  // The answer nests 5 deep ({"jobs": [{"devices": [{"throttle_reason_seconds": {}}]}]});
  // a device is about 40 values, so 50,000 devices' usage.
  if (std::string problem = base::JsonShapeProblem(body, 32, 2'000'000); !problem.empty()) {
    return Status::InvalidArgument("not a /api/v1/jobs answer: it " + problem);
  }
  json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("jobs") || !j["jobs"].is_array()) {
    return Status::InvalidArgument("not a /api/v1/jobs answer (expected {\"jobs\": [...]})");
  }
  std::vector<JobUsage> out;
  const json& jobs = j["jobs"];
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    Result<JobUsage> u = UsageFromJson(jobs[i]);
    if (!u.ok()) return u.status().Context("jobs[" + std::to_string(i) + "]");
    out.push_back(std::move(*u));
  }
  return out;
}

}  // namespace gpuscope::jobs
