#include "remediate/remediator.h"

#include <fmt/format.h>

#include "base/log.h"
#include "export/builtin_families.h"

namespace gpuscope::remediate {
namespace {

constexpr std::array<Outcome, 7> kCounted = {
    Outcome::kDone,     Outcome::kError,      Outcome::kDryRun,        Outcome::kBreakerOpen,
    Outcome::kOptedOut, Outcome::kAdminDrain, Outcome::kAlreadyDrained};

std::string Joined(const std::vector<std::string>& words) {
  std::string out;
  for (const std::string& w : words) out += (out.empty() ? "" : ",") + w;
  return out;
}

}  // namespace

Remediator::Remediator(RemediatorOptions options, std::unique_ptr<Actuator> actuator, Clock clock)
    : options_(std::move(options)), actuator_(std::move(actuator)), clock_(std::move(clock)) {}

Remediator::~Remediator() { Stop(); }

void Remediator::Start() {
  log::Info(
      "remediation on: actuator={} node={} dry_run={} resume_after={}s breaker={}% "
      "(at least {} nodes)",
      actuator_->Name(), actuator_->Node(), options_.policy.dry_run, options_.policy.resume_after_s,
      options_.policy.breaker_fraction * 100, options_.policy.breaker_min_nodes);
  worker_.Start();
}

void Remediator::Stop() { worker_.Stop(); }

void Remediator::Offer(Inputs inputs) { worker_.Offer(std::move(inputs)); }

void Remediator::RunOnce(const Inputs& inputs) {
  passes_.fetch_add(1);
  if (!inputs.health || !inputs.snapshot) return;
  const double now = clock_();
  const health::HealthReport& report = *inputs.health;
  const std::vector<Fault> faults = FindFaults(report, *inputs.snapshot, options_.findings);
  const Step step =
      Assess(state_, faults, report.nvml_up, report.gpus.size(), now, options_.policy);
  if (step == Step::kNone) return;
  const NodeView view = actuator_->Read();
  Decision d = Decide(state_, step, view, now, options_.policy);
  Status done = Status::Ok();
  if (d.Execute() && d.action == Action::kDrain) {
    Result<DrainResult> drained = actuator_->Drain(d);
    if (!drained.ok()) {
      done = drained.status();
    } else if (*drained == DrainResult::kBreakerOpen) {
      // Another agent won the last slot between our read and our drain.
      d.outcome = Outcome::kBreakerOpen;
      d.detail += fmt::format(
          "; circuit breaker: lost the race for the last of {} slots, "
          "not drained, only alerting",
          d.breaker_limit);
    }
  } else if (d.Execute()) {
    done = actuator_->Resume();
  }
  if (!done.ok()) {
    Decision failed = d;
    failed.detail += "; failed: " + done.message();
    Report(failed, Outcome::kError);
  } else if (d.outcome != Outcome::kNone && d.reported) {
    Report(d, d.outcome);
  }
  Settle(state_, d, done.ok(), now, options_.policy);
}

void Remediator::Report(const Decision& d, Outcome result) {
  {
    std::lock_guard lock(counts_mu_);
    ++counts_[static_cast<std::size_t>(d.action)][static_cast<std::size_t>(result)];
  }
  const std::string line = fmt::format(
      "remediation action={} result={} actuator={} node={} dry_run={} faults={} reason=\"{}\" "
      "detail=\"{}\"",
      ActionName(d.action), OutcomeName(result), actuator_->Name(), actuator_->Node(),
      options_.policy.dry_run, d.keys.empty() ? "-" : Joined(d.keys), d.reason, d.detail);
  if (result == Outcome::kError || result == Outcome::kBreakerOpen) {
    log::Warn("{}", line);
  } else {
    log::Info("{}", line);
  }
}

uint64_t Remediator::Count(Action action, Outcome outcome) const {
  std::lock_guard lock(counts_mu_);
  return counts_[static_cast<std::size_t>(action)][static_cast<std::size_t>(outcome)];
}

std::vector<prom::Family> Remediator::Families() const {
  prom::Family family = prom::MakeFamily(prom::kRemediationActions);
  std::lock_guard lock(counts_mu_);
  for (Action action : {Action::kDrain, Action::kResume}) {
    for (Outcome outcome : kCounted) {
      family.samples.push_back(
          {-1,
           {{"action", std::string(ActionName(action))},
            {"result", std::string(OutcomeName(outcome))}},
           static_cast<double>(
               counts_[static_cast<std::size_t>(action)][static_cast<std::size_t>(outcome)])});
    }
  }
  return {std::move(family)};
}

}  // namespace gpuscope::remediate
