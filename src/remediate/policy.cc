#include "remediate/policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace gpuscope::remediate {
namespace {

// The faults waiting for an action, the first in table order first.
std::vector<const FaultRecord*> Pending(const PolicyState& s, double now) {
  std::vector<const FaultRecord*> out;
  for (const auto& [key, record] : s.faults) {
    if (!record.handled && record.next_try <= now) out.push_back(&record);
  }
  std::stable_sort(out.begin(), out.end(), [](const FaultRecord* a, const FaultRecord* b) {
    return std::pair(a->fault.gpu, a->fault.finding) < std::pair(b->fault.gpu, b->fault.finding);
  });
  return out;
}

Decision DecideDrain(const PolicyState& s, const NodeView& v, double now, const PolicyOptions& o) {
  Decision d;
  d.action = Action::kDrain;
  const std::vector<const FaultRecord*> pending = Pending(s, now);
  if (pending.empty()) return d;
  for (const FaultRecord* r : pending) d.keys.push_back(r->fault.Key());
  d.reason = ReasonFor(pending.front()->fault);
  d.breaker_limit = BreakerLimit(v.nodes, o);
  const std::string fault = pending.front()->fault.Describe();
  if (!v.error.empty()) {
    d.outcome = Outcome::kError;
    d.detail = fmt::format("{}: cannot read the cluster: {}", fault, v.error);
  } else if (!v.found) {
    d.outcome = Outcome::kError;
    d.detail = fmt::format("{}: the node is not known to the cluster", fault);
  } else if (v.opted_out) {
    d.outcome = Outcome::kOptedOut;
    d.detail = fmt::format("{}: the node opted out of remediation; not drained", fault);
  } else if (v.drained && !IsOurReason(v.reason)) {
    d.outcome = Outcome::kAdminDrain;
    d.detail = fmt::format("{}: the node is drained by someone else (reason '{}'); left alone",
                           fault, v.reason);
  } else if (v.drained) {
    d.outcome = Outcome::kAlreadyDrained;
    d.detail = fmt::format("{}: gpuscope's drain stands (reason '{}')", fault, v.reason);
  } else if (const int limit = d.breaker_limit; v.drained_by_us >= limit) {
    d.outcome = Outcome::kBreakerOpen;
    d.detail = fmt::format(
        "{}: circuit breaker open: {} of {} nodes drained by gpuscope (limit {}); not drained, "
        "only alerting",
        fault, v.drained_by_us, v.nodes, limit);
    d.reported = std::any_of(pending.begin(), pending.end(),
                             [](const FaultRecord* r) { return !r->refusal_reported; });
  } else if (o.dry_run) {
    d.outcome = Outcome::kDryRun;
    d.detail = fmt::format("{}: dry run: would drain with reason '{}'", fault, d.reason);
  } else {
    d.outcome = Outcome::kDone;
    d.detail = fmt::format("{}: draining with reason '{}'", fault, d.reason);
  }
  return d;
}

Decision DecideResume(const PolicyState& s, const NodeView& v, const PolicyOptions& o) {
  Decision d;
  d.action = Action::kResume;
  d.reason = v.reason;
  if (!v.error.empty()) {
    d.outcome = Outcome::kError;
    d.detail = "cannot read the cluster to resume: " + v.error;
  } else if (v.drained && IsOurReason(v.reason)) {
    d.outcome = o.dry_run ? Outcome::kDryRun : Outcome::kDone;
    d.detail = fmt::format("{}GPUs healthy for {} s: {} gpuscope's drain (reason '{}')",
                           o.dry_run ? "dry run: " : "", o.resume_after_s,
                           o.dry_run ? "would resume" : "resuming", v.reason);
  } else if (o.dry_run && s.dry_drained) {
    d.outcome = Outcome::kDryRun;
    d.detail = fmt::format(
        "dry run: GPUs healthy for {} s: would resume the drain it would have "
        "written",
        o.resume_after_s);
  } else if (s.holds_drain && v.drained) {
    d.outcome = Outcome::kAdminDrain;
    d.detail = fmt::format("the drain is no longer gpuscope's (reason '{}'); left alone", v.reason);
  }
  return d;
}

}  // namespace

std::string ReasonFor(const Fault& fault) {
  return fmt::format("{} {} {}", kReasonPrefix, fault.Describe(), fault.Runbook());
}

bool IsOurReason(std::string_view reason) { return reason.starts_with(kReasonPrefix); }

int BreakerLimit(int nodes, const PolicyOptions& o) {
  const int share = static_cast<int>(std::floor(o.breaker_fraction * nodes));
  return std::max(o.breaker_min_nodes, share);
}

std::string_view ActionName(Action a) { return a == Action::kDrain ? "drain" : "resume"; }

std::string_view OutcomeName(Outcome o) {
  switch (o) {
    case Outcome::kNone:
      return "none";
    case Outcome::kDone:
      return "ok";
    case Outcome::kDryRun:
      return "dry_run";
    case Outcome::kBreakerOpen:
      return "breaker_open";
    case Outcome::kOptedOut:
      return "opted_out";
    case Outcome::kAdminDrain:
      return "admin_drain";
    case Outcome::kAlreadyDrained:
      return "already_drained";
    case Outcome::kError:
      return "error";
  }
  return "error";
}

Step Assess(PolicyState& s, const std::vector<Fault>& faults, bool nvml_up, std::size_t gpus,
            double now, const PolicyOptions& o) {
  std::set<std::string> standing;
  for (const Fault& f : faults) {
    std::string key = f.Key();
    standing.insert(key);
    if (!s.faults.contains(key)) s.faults.emplace(key, FaultRecord{f, now, false, false, now});
  }
  std::erase_if(s.faults, [&](const auto& entry) { return !standing.contains(entry.first); });

  const bool healthy = nvml_up && faults.empty() && gpus >= s.gpus_seen;
  s.gpus_seen = std::max(s.gpus_seen, gpus);
  if (!healthy) {
    s.healthy_since.reset();
  } else if (!s.healthy_since) {
    s.healthy_since = now;
  }

  if (!Pending(s, now).empty()) return Step::kDrain;
  const bool may_hold = s.holds_drain || s.dry_drained || !s.looked;
  if (may_hold && s.healthy_since && now - *s.healthy_since >= o.resume_after_s &&
      now >= s.resume_next_try) {
    return Step::kResume;
  }
  return Step::kNone;
}

Decision Decide(const PolicyState& s, Step step, const NodeView& view, double now,
                const PolicyOptions& o) {
  if (step == Step::kDrain) return DecideDrain(s, view, now, o);
  if (step == Step::kResume) return DecideResume(s, view, o);
  return {};
}

void Settle(PolicyState& s, const Decision& d, bool succeeded, double now, const PolicyOptions& o) {
  const bool failed = d.outcome == Outcome::kError || (d.Execute() && !succeeded);
  if (d.outcome != Outcome::kError) s.looked = true;
  if (d.action == Action::kResume) {
    if (failed) {
      s.resume_next_try = now + o.retry_after_s;
      return;
    }
    s.holds_drain = false;
    s.dry_drained = false;
    return;
  }
  for (const std::string& key : d.keys) {
    auto it = s.faults.find(key);
    if (it == s.faults.end()) continue;
    FaultRecord& r = it->second;
    if (failed || d.outcome == Outcome::kBreakerOpen) {
      r.next_try = now + o.retry_after_s;
      if (d.outcome == Outcome::kBreakerOpen) r.refusal_reported = true;
      continue;
    }
    r.handled = true;
  }
  if ((d.outcome == Outcome::kDone && succeeded) || d.outcome == Outcome::kAlreadyDrained) {
    s.holds_drain = true;
  }
  if (d.outcome == Outcome::kDryRun) s.dry_drained = true;
}

}  // namespace gpuscope::remediate
