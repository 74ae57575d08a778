#include "remediate/policy.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <set>

namespace gpuscope::remediate {
namespace {

// When a fault that came back may be looked at: at once on a node in
// service; while our drain stands, not before its flap's next look.
double FirstTry(const PolicyState& s, const std::string& key, double now) {
  const auto flap = s.flaps.find(key);
  if ((!s.holds_drain && !s.dry_drained) || flap == s.flaps.end()) return now;
  return std::max(now, flap->second.next_look);
}

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
  d.reason = ReasonFor(pending.front()->fault, s.gpus_seen);
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
  } else if (v.held && !v.drained) {
    d.outcome = Outcome::kAdminDrain;
    d.detail = fmt::format(
        "{}: the node is out of service by someone else's word (state '{}', reason '{}'); left "
        "alone",
        fault, v.state, v.reason);
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
  } else if (v.drained && IsOurReason(v.reason) && !v.held && GpusInReason(v.reason) > s.gpus_now) {
    // Restarted since the drain: the GPUs it saw are not all back.
    d.gpus_in_reason = GpusInReason(v.reason);
    d.detail = fmt::format("not resuming: the drain saw {} GPUs, {} now (reason '{}')",
                           d.gpus_in_reason, s.gpus_now, v.reason);
  } else if (v.drained && IsOurReason(v.reason) && !v.held) {
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
  } else if (s.holds_drain && (v.drained || v.held)) {
    d.outcome = Outcome::kAdminDrain;
    d.detail = fmt::format(
        "the node is no longer held by gpuscope's drain alone (state '{}', reason '{}'); left "
        "alone",
        v.state, v.reason);
  }
  return d;
}

}  // namespace

std::string ReasonFor(const Fault& fault, std::size_t gpus) {
  if (gpus == 0) return fmt::format("{} {} {}", kReasonPrefix, fault.Describe(), fault.Runbook());
  return fmt::format("{} {} of {} GPUs {}", kReasonPrefix, fault.Describe(), gpus, fault.Runbook());
}

bool IsOurReason(std::string_view reason) { return reason.starts_with(kReasonPrefix); }

std::size_t GpusInReason(std::string_view reason) {
  if (!IsOurReason(reason)) return 0;
  const std::size_t end = reason.find(" GPUs ");
  const std::size_t of = reason.rfind(" of ", end);
  if (end == std::string_view::npos || of == std::string_view::npos) return 0;
  const std::string_view digits = reason.substr(of + 4, end - of - 4);
  std::size_t n = 0;
  const auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
  return ec == std::errc() && ptr == digits.data() + digits.size() && n < 100000 ? n : 0;
}

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
  std::erase_if(s.flaps, [&](const auto& e) { return now - e.second.cleared_at > kFlapMemoryS; });
  std::set<std::string> standing;
  bool relapse = false;
  for (const Fault& f : faults) {
    std::string key = f.Key();
    standing.insert(key);
    if (s.faults.contains(key)) continue;
    s.faults.emplace(key, FaultRecord{f, now, false, false, FirstTry(s, key, now)});
    relapse = relapse || (s.resumed_at && now - *s.resumed_at <= kFlapMemoryS);
  }
  // A fault back soon after our resume: the next resume waits twice as long.
  if (relapse) {
    ++s.relapses;
    s.resumed_at.reset();
  } else if (s.resumed_at && now - *s.resumed_at > kFlapMemoryS) {
    s.relapses = 0;
  }
  std::erase_if(s.faults, [&](const auto& entry) {
    if (standing.contains(entry.first)) return false;
    Flap& flap = s.flaps[entry.first];
    ++flap.count;
    flap.cleared_at = now;
    return true;
  });
  s.gpus_now = gpus;

  const bool healthy = nvml_up && faults.empty() && gpus >= s.gpus_seen;
  s.gpus_seen = std::max(s.gpus_seen, gpus);
  if (!healthy) {
    s.healthy_since.reset();
  } else if (!s.healthy_since) {
    s.healthy_since = now;
  }

  if (!Pending(s, now).empty()) return Step::kDrain;
  const bool may_hold = s.holds_drain || s.dry_drained || !s.looked;
  const double healthy_for = o.resume_after_s * std::ldexp(1.0, std::min(s.relapses, 4));
  if (may_hold && s.healthy_since && now - *s.healthy_since >= healthy_for &&
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
    if (d.gpus_in_reason > s.gpus_now) {  // our drain stands: wait for its GPUs
      s.gpus_seen = std::max(s.gpus_seen, d.gpus_in_reason);
      s.holds_drain = true;
      s.healthy_since.reset();
      return;
    }
    if (d.outcome == Outcome::kDone || d.outcome == Outcome::kDryRun) s.resumed_at = now;
    s.holds_drain = false;
    s.dry_drained = false;
    return;
  }
  for (const std::string& key : d.keys) {
    // A flapping fault was looked at: the next look waits 1, 2, 4, ... s.
    if (auto flap = s.flaps.find(key); flap != s.flaps.end()) {
      const int doublings = std::min(flap->second.count, 20) - 1;
      flap->second.next_look = now + std::min(o.retry_after_s, std::ldexp(1.0, doublings));
    }
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
