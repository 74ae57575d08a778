#include "jobs/prom_tenants.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <tuple>

#include "jobs/ledger.h"
#include "jobs/prom_source.h"

namespace gpuscope::jobs {
namespace {

// The answers' order.
enum Answer { kFirst, kLast, kHeld, kBusy, kEnergy, kIdleHeld, kSharedSteps, kMeasuredSteps, kN };

// What a GPU value is folded to and joined on (the tenant rules' key).
constexpr const char* kGpu = "instance, gpu, uuid";

struct Kind {
  const char* matcher;  // selects the series of a holder of this kind
  const char* by;       // the labels that name one
};

Result<Kind> KindOf(const std::string& by) {
  if (by == "job") return Kind{R"(hpc_job!="")", "hpc_job"};
  if (by == "workload") return Kind{R"(workload!="")", "workload"};
  if (by == "pod") return Kind{R"(pod!="")", "namespace, pod"};
  return Status::InvalidArgument("'" + by + "' is not job, pod or workload");
}

// One series per holder of each whole GPU in either attribution mode
// (gpuscope:gpu_holder:info of the tenant rules), restricted by `matcher`.
std::string Holders(const std::string& matcher) {
  const std::string m = matcher.empty() ? "" : "," + matcher;
  return fmt::format(
      "group by ({0}, namespace, pod, container, hpc_job, workload) ("
      "gpuscope_gpu_holder_info{{gpu_instance=\"\"{1}}} or "
      "({{__name__=~\"gpuscope_gpu_info|gpuscope_gpu_lost\",gpu_instance=\"\"{1}}} "
      "unless on ({0}) gpuscope_gpu_holder_info))",
      kGpu, m);
}

// The GPUs whose holders' measured SM shares add up to more than 0.
std::string Measured() {
  return fmt::format(
      "(sum by ({0}) (gpuscope_gpu_holder_sm_share_ratio{{gpu_instance=\"\",workload!=\"\"}}) > 0)",
      kGpu);
}

// The GPUs held by two holders or more.
std::string SharedGpus() { return fmt::format("(count by ({0}) ({1}) > 1)", kGpu, Holders("")); }

// A holder's measured weight (gpuscope:gpu_holder_share:ratio): its part of
// all the processes' SM use, plus an even part of the use of processes no
// holder matches (the share series without holder labels); only on the GPUs
// of Measured().
std::string MeasuredWeight() {
  const std::string share = "gpuscope_gpu_holder_sm_share_ratio{gpu_instance=\"\"";
  return fmt::format(
      "((max by ({0}, namespace, pod, container, hpc_job, workload) ({1},workload!=\"\"}}) "
      "+ on ({0}) group_left () ((sum by ({0}) ({1},workload=\"\"}}) or "
      "0 * sum by ({0}) ({1},workload!=\"\"}})) / on ({0}) count by ({0}) ({2}))) "
      "/ on ({0}) group_left () (sum by ({0}) ({1}}}) and on ({0}) {3}))",
      kGpu, share, Holders(""), Measured());
}

// Each holder's share of its GPU, 0 while the GPU is lost
// (gpuscope:gpu_holder_share:ratio): measured where the agent measured it,
// else 1 / its holders.
std::string Share(const Kind& kind) {
  return fmt::format(
      "(({1} * on ({0}) group_left () "
      "(max by ({0}) (gpuscope_gpu_lost{{gpu_instance=\"\"}}) == bool 0)) * "
      "({3} or ({2} / on ({0}) group_left () count by ({0}) ({2}))))",
      kGpu, Holders(kind.matcher), Holders(""), MeasuredWeight());
}

std::string Label(const baseline::Sample& s, const char* name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

std::string HolderId(const std::string& by, const baseline::Sample& s) {
  if (by == "job") return Label(s, "hpc_job");
  if (by == "workload") return Label(s, "workload");
  return Label(s, "namespace") + "/" + Label(s, "pod");
}

}  // namespace

Result<std::vector<std::string>> TenantsQueries(const TenantsQuery& q) {
  Result<Kind> kind = KindOf(q.by);
  if (!kind.ok()) return kind.status();
  const std::string step = fmt::format("{:.0f}s", std::max(1.0, q.step_seconds));
  const std::string range = fmt::format("[{:.0f}s:{}]", q.range_seconds, step);
  const std::string by = fmt::format("{}, {}", kind->by, kGpu);
  const std::string share = Share(*kind);
  const std::string per_holder = fmt::format("sum by ({}) ({})", by, share);
  // A GPU counter's increase over the step, credited to its holders by share.
  auto credited = [&](const char* counter) {
    return fmt::format(
        "sum_over_time((sum by ({1}) (clamp_min(max by ({0}) ({2}{{gpu_instance=\"\"}}) - "
        "max by ({0}) ({2}{{gpu_instance=\"\"}} offset {3}), 0) * on ({0}) group_right () "
        "{4})){5})",
        kGpu, by, counter, step, share, range);
  };
  const std::string seen = fmt::format("(0 * {} + time()){}", per_holder, range);
  std::vector<std::string> out(kN);
  out[kFirst] = "min_over_time(" + seen + ")";
  out[kLast] = "max_over_time(" + seen + ")";
  out[kHeld] = fmt::format("sum_over_time(({}){}) * {:.0f}", per_holder, range,
                           std::max(1.0, q.step_seconds));
  out[kBusy] = credited("gpuscope_gpu_busy_seconds_total");
  out[kEnergy] = credited("gpuscope_energy_joules_total");
  out[kIdleHeld] = credited("gpuscope_gpu_idle_held_seconds_total");
  // Steps the holder's GPU was shared, and of those the steps split by measured share.
  const std::string shared = fmt::format("sum by ({}) ({} and on ({}) {})", by,
                                         Holders(kind->matcher), kGpu, SharedGpus());
  out[kSharedSteps] = fmt::format("count_over_time(({}){})", shared, range);
  out[kMeasuredSteps] =
      fmt::format("count_over_time(({} and on ({}) {}){})", shared, kGpu, Measured(), range);
  return out;
}

Result<std::vector<JobUsage>> TenantsFromAnswers(
    const TenantsQuery& q, const std::vector<std::vector<baseline::Sample>>& answers, double now) {
  if (answers.size() != kN) return Status::Internal("tenants report: wrong number of answers");
  // By holder, then by device (instance and uuid).
  std::map<std::string, std::map<std::string, DeviceUsage>> holders;
  auto device = [&](const baseline::Sample& s) -> DeviceUsage& {
    return holders[HolderId(q.by, s)][Label(s, "instance") + "|" + Label(s, "uuid")];
  };
  for (const baseline::Sample& s : answers[kFirst]) {
    DeviceUsage& d = device(s);
    d.device_key = d.uuid = Label(s, "uuid");
    d.gpu = static_cast<unsigned>(std::strtoul(Label(s, "gpu").c_str(), nullptr, 10));
    d.hostname = Label(s, "instance");
    d.first_seen = d.last_seen = s.value;
  }
  // Each answer's value for the devices the first one named (a stray one is ignored).
  auto each = [&](Answer a, auto&& apply) {
    for (const baseline::Sample& s : answers[a]) {
      auto h = holders.find(HolderId(q.by, s));
      if (h == holders.end()) continue;
      auto it = h->second.find(Label(s, "instance") + "|" + Label(s, "uuid"));
      if (it != h->second.end()) apply(it->second, s.value);
    }
  };
  each(kLast, [](DeviceUsage& d, double v) { d.last_seen = v; });
  each(kHeld, [](DeviceUsage& d, double v) { d.held_seconds = v; });
  each(kBusy, [](DeviceUsage& d, double v) { d.busy_seconds = v; });
  each(kEnergy, [](DeviceUsage& d, double v) { d.energy_joules = v, d.energy_known = true; });
  each(kIdleHeld, [](DeviceUsage& d, double v) { d.idle_held_seconds = v; });
  // Seconds shared (all counted as even first), then those measured moved out.
  const double step = std::max(1.0, q.step_seconds);
  each(kSharedSteps, [&](DeviceUsage& d, double v) { d.even_split_seconds = v * step; });
  each(kMeasuredSteps, [&](DeviceUsage& d, double v) { d.measured_split_seconds = v * step; });
  for (auto& [id, devices] : holders) {
    for (auto& [key, d] : devices) {
      d.even_split_seconds = std::max(0.0, d.even_split_seconds - d.measured_split_seconds);
      d.split = SplitName(d);
    }
  }

  std::vector<JobUsage> out;
  for (auto& [id, devices] : holders) {
    JobUsage u;
    u.kind = q.by;
    u.id = id;
    SetDevices(devices, q.step_seconds, now, u);
    out.push_back(std::move(u));
  }
  std::stable_sort(out.begin(), out.end(), [](const JobUsage& a, const JobUsage& b) {
    return std::make_tuple(a.end.has_value(), a.start) <
           std::make_tuple(b.end.has_value(), b.start);
  });
  return out;
}

}  // namespace gpuscope::jobs
