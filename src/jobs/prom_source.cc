#include "jobs/prom_source.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

namespace gpuscope::jobs {
namespace {

// The answers' order.
enum Answer { kFirst, kLast, kBusy, kSmActive, kEnergy, kIdleHeld, kThrottled, kPeak, kTotal, kN };

// Clock reasons that count as throttling (ledger.cc's kThrottleBits).
constexpr const char* kThrottleReasons =
    "sw_power_cap|hw_slowdown|sw_thermal_slowdown|hw_thermal_slowdown|hw_power_brake_slowdown";

// A PromQL string literal's contents.
std::string Quote(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"') out += '\\';
    out += c;
  }
  return out;
}

Result<std::string> Selector(const PromQuery& q) {
  if (q.kind == "job") return fmt::format("hpc_job=\"{}\"", Quote(q.id));
  if (q.kind == "workload") return fmt::format("workload=\"{}\"", Quote(q.id));
  if (q.kind == "pod") {
    const auto slash = q.id.find('/');
    if (slash == std::string::npos || slash == 0 || slash + 1 == q.id.size()) {
      return Status::InvalidArgument("pod '" + q.id + "': want NAMESPACE/NAME");
    }
    return fmt::format("namespace=\"{}\",pod=\"{}\"", Quote(q.id.substr(0, slash)),
                       Quote(q.id.substr(slash + 1)));
  }
  return Status::InvalidArgument("'" + q.kind + "' is not job, pod or workload");
}

std::string Increase(const std::string& metric, const std::string& sel, const std::string& range) {
  return fmt::format("max_over_time({0}{{{1}}}[{2}]) - min_over_time({0}{{{1}}}[{2}])", metric, sel,
                     range);
}

std::string Label(const baseline::Sample& s, const char* name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

std::string DeviceKey(const baseline::Sample& s) {
  const std::string gi = Label(s, "gpu_instance");
  return Label(s, "instance") + "|" + Label(s, "uuid") + (gi.empty() ? "" : "/" + gi);
}

}  // namespace

Result<std::vector<std::string>> UsageQueries(const PromQuery& q) {
  Result<std::string> sel = Selector(q);
  if (!sel.ok()) return sel.status();
  const std::string range = fmt::format("{:.0f}s", q.range_seconds);
  const std::string sub = fmt::format("[{}:{:.0f}s]", range, std::max(1.0, q.step_seconds));
  const std::string held = fmt::format("timestamp(gpuscope_gpu_lost{{{}}})", *sel);
  const std::string throttle_sel = fmt::format("{},reason=~\"{}\"", *sel, kThrottleReasons);
  std::vector<std::string> out(kN);
  out[kFirst] = "min_over_time(" + held + sub + ")";
  out[kLast] = "max_over_time(" + held + sub + ")";
  out[kBusy] = Increase("gpuscope_gpu_busy_seconds_total", *sel, range);
  out[kSmActive] = Increase("gpuscope_sm_active_seconds_total", *sel, range);
  out[kEnergy] = Increase("gpuscope_energy_joules_total", *sel, range);
  out[kIdleHeld] = Increase("gpuscope_gpu_idle_held_seconds_total", *sel, range);
  out[kThrottled] = Increase("gpuscope_clock_throttle_seconds_total", throttle_sel, range);
  out[kPeak] = fmt::format("max_over_time(gpuscope_memory_used_bytes{{{}}}[{}])", *sel, range);
  out[kTotal] = fmt::format("max_over_time(gpuscope_memory_total_bytes{{{}}}[{}])", *sel, range);
  return out;
}

Result<JobUsage> UsageFromAnswers(const PromQuery& q,
                                  const std::vector<std::vector<baseline::Sample>>& answers,
                                  double now) {
  if (answers.size() != kN) return Status::Internal("job report: wrong number of answers");
  std::map<std::string, DeviceUsage> devices;
  for (const baseline::Sample& s : answers[kFirst]) {
    DeviceUsage& d = devices[DeviceKey(s)];
    d.device_key = Label(s, "uuid");
    d.uuid = Label(s, "uuid");
    d.gpu = static_cast<unsigned>(std::strtoul(Label(s, "gpu").c_str(), nullptr, 10));
    // The agent's host label when it renders one, else the scrape target.
    d.hostname = Label(s, "Hostname");
    if (d.hostname.empty()) d.hostname = Label(s, "hostname");
    if (d.hostname.empty()) d.hostname = Label(s, "instance");
    d.first_seen = s.value;
  }
  if (devices.empty()) {
    return Status::NotFound("no " + q.kind + " '" + q.id + "' in the last " +
                            fmt::format("{:.0f}", q.range_seconds) + " s of gpuscope series");
  }
  // Each answer's value for the devices it names (others keep their default).
  auto each = [&](Answer a, auto&& apply) {
    for (const baseline::Sample& s : answers[a]) {
      auto it = devices.find(DeviceKey(s));
      if (it != devices.end()) apply(it->second, s);
    }
  };
  each(kLast, [](DeviceUsage& d, const baseline::Sample& s) { d.last_seen = s.value; });
  each(kBusy, [](DeviceUsage& d, const baseline::Sample& s) { d.busy_seconds = s.value; });
  each(kSmActive, [](DeviceUsage& d, const baseline::Sample& s) {
    d.sm_active_seconds = s.value, d.sm_active_known = true;
  });
  each(kEnergy, [](DeviceUsage& d, const baseline::Sample& s) {
    d.energy_joules = s.value, d.energy_known = true;
  });
  each(kIdleHeld, [](DeviceUsage& d, const baseline::Sample& s) { d.idle_held_seconds = s.value; });
  each(kThrottled, [](DeviceUsage& d, const baseline::Sample& s) {
    d.throttled_seconds += s.value;  // reasons may overlap: an upper bound
    if (s.value > 0) d.throttle_reason_seconds[Label(s, "reason")] += s.value;
  });
  each(kPeak, [](DeviceUsage& d, const baseline::Sample& s) { d.memory_peak_bytes = s.value; });
  each(kTotal, [](DeviceUsage& d, const baseline::Sample& s) { d.memory_total_bytes = s.value; });

  JobUsage u;
  u.kind = q.kind;
  u.id = q.id;
  const baseline::Sample& any = answers[kFirst].front();
  u.namespace_name = Label(any, "namespace");
  u.workload = Label(any, "workload");
  u.hpc_job = Label(any, "hpc_job");
  for (auto& [key, d] : devices) {
    d.held_seconds = std::max(0.0, d.last_seen - d.first_seen);
    d.throttled_seconds = std::min(d.throttled_seconds, d.held_seconds);
  }
  SetDevices(devices, q.step_seconds, now, u);
  return u;
}

void SetDevices(const std::map<std::string, DeviceUsage>& devices, double step_seconds, double now,
                JobUsage& u) {
  u.devices.clear();
  u.start = devices.empty() ? 0 : devices.begin()->second.first_seen;
  double last = 0;
  for (const auto& [key, d] : devices) {
    u.start = std::min(u.start, d.first_seen);
    last = std::max(last, d.last_seen);
    u.devices.push_back(d);
  }
  std::stable_sort(u.devices.begin(), u.devices.end(), [](const auto& a, const auto& b) {
    return std::tie(a.hostname, a.gpu) < std::tie(b.hostname, b.gpu);
  });
  if (last < now - 3 * step_seconds) u.end = last;
}

std::vector<std::string> BaselineQueries(const JobUsage& u) {
  if (u.workload.empty()) return {};
  const std::string sel = fmt::format(R"(namespace="{}",workload="{}",hpc_job="{}")",
                                      Quote(u.namespace_name), Quote(u.workload), Quote(u.hpc_job));
  return {fmt::format(R"(gpuscope:workload_signal:p5_14d{{signal="sm_active",{}}})", sel),
          fmt::format(R"(gpuscope:workload_signal:p50_14d{{signal="sm_active",{}}})", sel),
          fmt::format("gpuscope:workload_baseline:warming_up_14d{{{}}}", sel)};
}

std::optional<WorkloadBaseline> BaselineFromAnswers(
    const JobUsage& u, const std::vector<std::vector<baseline::Sample>>& answers) {
  if (answers.size() != 3 || answers[0].empty() || answers[1].empty()) return std::nullopt;
  // Warm-up unknown counts as warming up: no verdict on a baseline not yet learned.
  if (answers[2].empty() || answers[2].front().value != 0) return std::nullopt;
  const double p5 = answers[0].front().value, p50 = answers[1].front().value;
  // An impossible ratio from the server is no baseline.
  if (!(p5 >= 0 && p5 <= 1 && p50 >= 0 && p50 <= 1)) return std::nullopt;
  return WorkloadBaseline{u.workload, p5, p50};
}

}  // namespace gpuscope::jobs
