// The remediation thread of `gpuscope serve --remediate`: fed each published
// cycle's health report and snapshot, it finds the faults of the enabled
// triggers (triggers.h), runs the policy (policy.h) and carries out its
// decisions through an Actuator (Slurm, Kubernetes), on a thread of its own.
//
// Offer() only stores the latest inputs and notifies (a lock held for a
// pointer swap), so the sampler never waits on sinfo, scontrol or an API
// server; a slow cluster makes remediation skip cycles, nothing else. The
// cluster is read only when the policy has something to decide.
//
// Every decision that is not "nothing to do" is logged as one structured line
//   remediation action=drain result=ok actuator=slurm node=n1 dry_run=false
//     faults=xid_79/GPU-... reason="gpuscope: ..." detail="..."
// and counted in gpuscope_remediation_actions_total{action,result} (every
// action x result pair exported from the start at 0, so increase() sees the
// first refusal).
//
// Thread safety: Offer, Families and Stop may be called from any thread;
// RunOnce from one thread at a time (the remediation thread once Start ran,
// or a test without it).
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/latest_worker.h"
#include "export/family.h"
#include "gpuscope/snapshot.h"
#include "health/checks.h"
#include "remediate/actuator.h"
#include "remediate/policy.h"
#include "remediate/triggers.h"

namespace gpuscope::remediate {

struct RemediatorOptions {
  FindingSet findings = DefaultFindings();
  PolicyOptions policy;
};

class Remediator {
 public:
  struct Inputs {
    std::shared_ptr<const health::HealthReport> health;  // null: nothing yet
    SnapshotPtr snapshot;
  };
  using Clock = std::function<double()>;

  Remediator(RemediatorOptions options, std::unique_ptr<Actuator> actuator, Clock clock);
  ~Remediator();  // Stop()
  Remediator(const Remediator&) = delete;
  Remediator& operator=(const Remediator&) = delete;

  void Start();
  void Stop();  // idempotent
  // Hands over the latest cycle; O(1), never waits for the cluster.
  void Offer(Inputs inputs);
  // One pass over `inputs` now, on the calling thread.
  void RunOnce(const Inputs& inputs);

  // gpuscope_remediation_actions_total.
  std::vector<prom::Family> Families() const;
  // How often (action, result) was counted.
  uint64_t Count(Action action, Outcome outcome) const;
  // How many passes ran (tests wait on it).
  uint64_t passes() const { return passes_.load(); }

 private:
  static constexpr std::size_t kOutcomes = 8;
  void Report(const Decision& d, Outcome result);

  RemediatorOptions options_;
  std::unique_ptr<Actuator> actuator_;
  Clock clock_;
  PolicyState state_;  // only RunOnce's thread
  mutable std::mutex counts_mu_;
  std::array<std::array<uint64_t, kOutcomes>, 2> counts_{};
  std::atomic<uint64_t> passes_{0};
  // Last: its thread runs RunOnce, so it stops before the members above go.
  base::LatestWorker<Inputs> worker_{[this](Inputs& inputs) { RunOnce(inputs); }};
};

}  // namespace gpuscope::remediate
