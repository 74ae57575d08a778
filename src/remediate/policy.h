// The remediation policy: what to do about this cycle's faults, as pure
// functions of a small state, the faults, the clock and (when acting) what
// the cluster says about the node. The Remediator (remediator.h) runs it on
// its own thread and carries out the decisions through an Actuator.
//
// Two steps per cycle, so the cluster is asked only when there is something
// to decide:
//   1. Assess(state, faults, nvml_up, gpus, now): records which faults stand
//      and since when the node is healthy; answers kDrain when a fault that
//      stands has not been handled yet (and its retry time came), kResume
//      when the node held a drain of ours (or might: before the first look)
//      and has been healthy for resume_after_s, else kNone.
//   2. Decide(state, step, view, now): with the node and the cluster read
//      just before (NodeView), one Decision. Then Settle(state, decision,
//      succeeded, now) records the outcome.
//
// Rules (docs/runbooks.md "Remediation"):
// - One action per fault: a fault is handled once (drained, found drained,
//   refused for opt-out or an admin's drain, or done in dry run) and never
//   acted on again while it stands; if it clears and comes back it is a new
//   fault. A failed action is retried after retry_after_s. A breaker refusal
//   is counted and logged once per fault and retried after retry_after_s
//   silently, so the node drains once the breaker closes.
// - Never touch a drain gpuscope did not write (its reason does not start
//   with kReasonPrefix): no overwrite, no resume.
// - Resume only our own drain, and only after the node has been healthy
//   (no fault of an enabled finding, NVML up, every GPU seen before back)
//   for resume_after_s. "Seen before" includes the GPU count the drain's
//   reason carries, so a restarted agent never resumes on less evidence.
// - Flapping: while our drain stands, a fault that keeps clearing and coming
//   back is looked at (a read of the cluster) 1, 2, 4, ... s after its last
//   look, at most retry_after_s; a fault back within kFlapMemoryS of our
//   resume doubles the healthy time the next resume needs (at most
//   16 x resume_after_s).
// - Circuit breaker: at most max(breaker_min_nodes, floor(fraction x nodes))
//   nodes drained by gpuscope in the cluster; past that it only alerts.
// - Opt-out: a node marked so (Slurm feature, Kubernetes label) is never
//   changed; its faults are refused once each.
// - Dry run: decides and logs as above, changes nothing.
//
// Thread safety: plain values and pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "remediate/triggers.h"

namespace gpuscope::remediate {

// Every reason gpuscope writes starts with this; nothing else is ours.
inline constexpr std::string_view kReasonPrefix = "gpuscope:";
// "gpuscope: XID 79 on GPU 3 (GPU-...) of 8 GPUs https://.../GpuFallenOffBus.md":
// `gpus`, the most GPUs the node showed, is the evidence a resume needs
// (omitted when 0); an agent restarted with a GPU gone reads it back.
std::string ReasonFor(const Fault& fault, std::size_t gpus);
bool IsOurReason(std::string_view reason);
// The GPU count a reason of ours carries, 0 when none.
std::size_t GpusInReason(std::string_view reason);

struct PolicyOptions {
  bool dry_run = false;
  double resume_after_s = 600;    // healthy this long before our drain is resumed
  double retry_after_s = 30;      // a failed or refused action is tried again after this
  double breaker_fraction = 0.1;  // of the cluster's nodes drained by gpuscope at most
  int breaker_min_nodes = 1;      // ... and at least this many
};

// The breaker's limit for a cluster of `nodes` nodes.
int BreakerLimit(int nodes, const PolicyOptions& o);

// What the cluster says, read just before acting.
struct NodeView {
  std::string error;     // not empty: the cluster could not be read (nothing else is valid)
  bool found = false;    // the node is known to the cluster
  bool drained = false;  // drained or draining (Slurm), condition set (Kubernetes)
  // Out of service by someone else's word, whatever the reason: Slurm's
  // down, fail, maint, reserved, reboot, power states, ... or a reason
  // gpuscope did not write. Never changed, counted as admin_drain.
  bool held = false;
  std::string state;   // the cluster's word for the node's state, for the log
  std::string reason;  // the node's reason, "" when none
  bool opted_out = false;
  int nodes = 0;          // in the cluster
  int drained_by_us = 0;  // nodes with a gpuscope drain, this one included
};

struct FaultRecord {
  Fault fault;
  double since = 0;
  bool handled = false;
  bool refusal_reported = false;  // a breaker refusal was counted for it
  double next_try = 0;
};

// How long a cleared fault or a resume is remembered for the flap backoff.
inline constexpr double kFlapMemoryS = 600;

struct Flap {
  int count = 0;  // times the fault cleared
  double cleared_at = 0;
  double next_look = 0;  // while our drain stands, its next look waits until then
};

struct PolicyState {
  std::map<std::string, FaultRecord> faults;  // standing, by Fault::Key()
  bool holds_drain = false;                   // gpuscope drained this node (or found its drain)
  bool dry_drained = false;                   // dry run: it would hold a drain
  bool looked = false;                        // the node has been read at least once
  std::optional<double> healthy_since;
  std::size_t gpus_seen = 0;          // most GPUs any cycle (or our drain's reason) showed
  std::size_t gpus_now = 0;           // GPUs the last cycle showed
  double resume_next_try = 0;         // after a failed resume
  std::map<std::string, Flap> flaps;  // faults that cleared, by Fault::Key()
  std::optional<double> resumed_at;   // our last resume, until a fault comes back
  int relapses = 0;  // faults back soon after a resume (each doubles the healthy time)
};

enum class Step : uint8_t { kNone, kDrain, kResume };

// Step 1. The node is healthy when NVML is up, no fault stands and it shows
// as many GPUs as any cycle before (a GPU that vanished is not healthy).
Step Assess(PolicyState& s, const std::vector<Fault>& faults, bool nvml_up, std::size_t gpus,
            double now, const PolicyOptions& o);

enum class Action : uint8_t { kDrain, kResume };
enum class Outcome : uint8_t {
  kNone,            // nothing to do, nothing to log
  kDone,            // carried out (Settle says ok or error)
  kDryRun,          // would have been carried out
  kBreakerOpen,     // refused: too many nodes drained by gpuscope
  kOptedOut,        // refused: the node opted out
  kAdminDrain,      // left alone: drained by someone else
  kAlreadyDrained,  // our drain stands already
  kError,           // the cluster could not be read, or the action failed
};
std::string_view ActionName(Action a);    // "drain", "resume"
std::string_view OutcomeName(Outcome o);  // the `result` label: "ok" for kDone

struct Decision {
  Action action = Action::kDrain;
  Outcome outcome = Outcome::kNone;
  std::string reason;              // drain: the reason to write; resume: the reason found
  std::string detail;              // one sentence for the log
  std::vector<std::string> keys;   // the faults it answers
  int breaker_limit = 0;           // drain: the most nodes gpuscope may hold drained
  std::size_t gpus_in_reason = 0;  // resume: the GPU count our drain's reason carries
  bool Execute() const { return outcome == Outcome::kDone; }
  // Counted and logged (a silent retry of a reported refusal is not).
  bool reported = true;
};

// Step 2. `step` is Assess's answer (not kNone).
Decision Decide(const PolicyState& s, Step step, const NodeView& view, double now,
                const PolicyOptions& o);

// Records the outcome; `succeeded` matters only when d.Execute().
void Settle(PolicyState& s, const Decision& d, bool succeeded, double now, const PolicyOptions& o);

}  // namespace gpuscope::remediate
