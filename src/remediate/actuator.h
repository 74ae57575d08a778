// Where remediation acts: a cluster manager that can read the node (and the
// cluster, for the circuit breaker), drain it and resume it. Slurm
// (slurm.h) and Kubernetes (kubernetes.h) implement it; tests use fakes.
//
// Thread safety: an Actuator is used by one thread (the Remediator's).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscope/status.h"
#include "remediate/policy.h"

namespace gpuscope::remediate {

enum class DrainResult : uint8_t { kDrained, kBreakerOpen };

class Actuator {
 public:
  virtual ~Actuator() = default;
  virtual std::string_view Name() const = 0;    // "slurm", "kubernetes"
  virtual const std::string& Node() const = 0;  // the node it acts on
  // The node and the cluster now; NodeView::error says why when unreadable.
  virtual NodeView Read() = 0;
  // Takes the node out of scheduling with `d.reason` (a Decision to drain),
  // holding the circuit breaker under concurrency: the cluster itself is the
  // arbiter, so that however many agents drain at once, at most
  // `d.breaker_limit` nodes keep a gpuscope drain. kBreakerOpen: this node
  // lost the arbitration and is left (or put back) undrained.
  virtual Result<DrainResult> Drain(const Decision& d) = 0;
  // Puts it back (only ever called for a drain whose reason is ours).
  virtual Status Resume() = 0;
};

}  // namespace gpuscope::remediate
