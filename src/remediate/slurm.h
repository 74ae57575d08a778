// The Slurm actuator: reads the cluster with `sinfo` and acts with
// `scontrol update`, both run without a shell and with a timeout
// (command.h). The node is --slurm-node (default the short host name).
//
//   read:   sinfo --all --noheader --Node --format=%N|%T|%f|%H|%E
//           (every node: the breaker counts the nodes whose reason starts
//           with "gpuscope:"; %H, the reason's time, is stamped by slurmctld
//           and printed as epoch seconds: SLURM_TIME_FORMAT=%s)
//   drain:  scontrol update nodename=NODE state=drain reason=REASON
//           then the breaker's arbitration (below)
//   resume: scontrol update nodename=NODE state=resume
//
// A node in any state but plain service (idle, allocated, mixed, completing,
// planned, not responding) or with a reason gpuscope did not write is held
// by someone else (down, fail, maint, reserved, reboot, power saving, ...):
// NodeView::held, never touched. The node opts out with the Slurm feature
// kOptOutFeature (Features= in slurm.conf). Parsing is a pure function of
// sinfo's text.
//
// The breaker under concurrency (docs/runbooks.md "The breaker's guarantee
// under concurrency"): slurmctld's clock is the arbiter. After its drain the
// actuator waits until slurmctld's clock has passed the second of the drain,
// reads the cluster again and ranks gpuscope's drains by (reason time, node
// name); a node outside the first `breaker_limit` undoes its own drain and
// answers kBreakerOpen. Every drain that the second read misses is stamped
// later than ours, so every agent computes the same ranking.
//
// Thread safety: one thread per SlurmActuator.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "remediate/actuator.h"

namespace gpuscope::remediate {

inline constexpr std::string_view kOptOutFeature = "gpuscope-no-remediate";

struct SlurmOptions {
  std::string node;             // empty: the short host name
  std::string sinfo = "sinfo";  // programs (PATH lookup)
  std::string scontrol = "scontrol";
  double timeout_s = 10;  // per command
  // After a drain, how long to wait before the breaker's second read: a
  // second of slurmctld's clock (reasons are stamped to the second), plus a
  // margin for the two clocks' rates.
  double arbitration_wait_s = 1.05;
};

// What sinfo's %T (the long state, e.g. "drained*", "mixed+drain",
// "down~") says about a node.
struct SlurmState {
  bool drain = false;       // DRAIN, DRAINED, DRAINING (any form)
  bool in_service = false;  // nothing but plain service states and the drain
};
SlurmState ClassifyState(std::string_view state);

// One line of the sinfo command above.
struct SinfoNode {
  std::string name;
  std::string state;  // %T as printed
  std::string features;
  int64_t reason_time = 0;  // %H, epoch seconds; 0 when unknown
  std::string reason;       // "" when none
};
// Every line (a node listed once per partition appears once per line).
std::vector<SinfoNode> ParseSinfoNodes(std::string_view text);

// The view of `node` from the text of the sinfo command above (pure). A
// node listed once per partition counts once.
NodeView ParseSinfo(std::string_view text, std::string_view node);

// The breaker's arbitration (pure): whether `node`'s drain, with reason
// `reason`, is among the first `limit` gpuscope drains of `nodes` ranked by
// (reason time, name). A gpuscope drain of unknown time ranks first. False
// when `node` does not hold that drain.
bool WithinBreaker(const std::vector<SinfoNode>& nodes, std::string_view node,
                   std::string_view reason, int limit);

class SlurmActuator : public Actuator {
 public:
  explicit SlurmActuator(SlurmOptions options);
  std::string_view Name() const override { return "slurm"; }
  NodeView Read() override;
  Result<DrainResult> Drain(const Decision& d) override;
  Status Resume() override;
  const std::string& Node() const override { return options_.node; }

 private:
  Result<std::string> Sinfo();
  Status Update(const std::vector<std::string>& args);
  Result<DrainResult> Arbitrate(const Decision& d);
  SlurmOptions options_;
};

// The short host name (up to the first dot), "" when unknown.
std::string ShortHostname();

}  // namespace gpuscope::remediate
