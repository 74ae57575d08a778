// What the Kubernetes actuator reads from and writes to the API server, as
// pure functions of the JSON text (kubernetes.h sends the requests):
//
// - ParseNode: this node (GET /api/v1/nodes/NODE): drained, and by whom.
// - ParseNodePage: one page of GET /api/v1/nodes?limit=..., kept as counts and
//   the names of the nodes gpuscope drained, so memory is bounded by one page.
// - The PATCH bodies of the condition and the taint.
// - The circuit breaker's Lease and the plans that change it (below).
//
// Whose drain it is (the policy leaves every drain that is not ours alone):
//   1. our GpuHealthy=False (message starting with "gpuscope:") stands: ours,
//      whatever a person added since (a cordon, a taint): resume takes back
//      our condition and our taint only, never their cordon or taint. With
//      --remediate-taint, a condition without our taint is a drain half done
//      (not drained, so the next drain finishes it) unless a person's mark
//      keeps the node out anyway;
//   2. GpuHealthy=False written by another tool: theirs;
//   3. our taint left without our condition (a resume half done): ours, so
//      the next resume takes it off;
//   4. a person's mark: spec.unschedulable (kubectl cordon, drain), or a taint
//      that takes the node out of service: node.kubernetes.io/unschedulable
//      (what cordon adds), node.kubernetes.io/out-of-service,
//      ToBeDeletedByClusterAutoscaler, or any NoExecute taint that is not one
//      of the node controller's own node.kubernetes.io/ condition taints
//      (not-ready, unreachable, ...: they come and go with the kubelet). A
//      NoSchedule taint is a dedication (nvidia.com/gpu, dedicated=ml: pods
//      with the toleration still run there), not a drain: it is kept as is,
//      and gpuscope adds its own beside it. The reason names the mark and never
//      starts with "gpuscope:".
//
// Every field is type-checked: a field of another type is an error naming it.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"
#include "remediate/policy.h"

namespace gpuscope::remediate {

inline constexpr std::string_view kConditionType = "GpuHealthy";
inline constexpr std::string_view kTaintKey = "gpuscope.io/gpu-unhealthy";
inline constexpr std::string_view kOptOutLabel = "gpuscope.io/remediate";

// What one Node object says.
struct NodeFacts {
  // found, drained, reason, opted_out; error when the text is not a Node.
  NodeView view;
  bool our_condition = false;  // our GpuHealthy=False stands
  bool our_taint = false;      // our taint is on the node
  std::string resource_version;
  std::string taints = "[]";  // spec.taints, a JSON array
};

// `taint_mode`: --remediate-taint (a drain of ours is the condition and the taint).
NodeFacts ParseNode(std::string_view json, bool taint_mode);

// One page of a NodeList.
struct NodePage {
  std::string error;  // not empty: not a NodeList page (nothing else is valid)
  int nodes = 0;
  std::vector<std::string> drained_by_us;  // names, GpuHealthy=False with our message
  std::string next;                        // metadata.continue; "" on the last page
};
NodePage ParseNodePage(std::string_view json);

// The bodies of the PATCHes (`now` is an RFC 3339 time).
std::string ConditionPatch(bool healthy, std::string_view reason, std::string_view message,
                           std::string_view now);
// JSON patch setting spec.taints to `taints` (a JSON array) with ours added or
// removed, after testing `resource_version`.
std::string TaintPatch(std::string_view taints, bool add, std::string_view resource_version);

// The circuit breaker's Lease (coordination.k8s.io/v1, in the agent's
// namespace): its annotation kHoldersAnnotation lists the nodes gpuscope holds
// drained, each with the time it claimed its slot, as a JSON object
// {"gpu-node-3":"2026-12-04T08:00:00Z"}. Every change is a PUT carrying the
// resourceVersion read, so of two agents racing for the last slot one gets
// 409 Conflict, reads again and finds no slot left.
inline constexpr std::string_view kLeaseName = "gpuscope-remediation";
inline constexpr std::string_view kHoldersAnnotation = "gpuscope.io/drained-nodes";
// A claim this young always holds its slot: it covers the time between
// claiming the slot and the condition showing, and clocks a little apart.
inline constexpr int64_t kClaimGraceS = 120;

using Holders = std::map<std::string, int64_t>;  // node -> when it claimed its slot (Unix s)

struct BreakerLease {
  std::string object;  // the Lease as read (JSON): the base of the next PUT
  Holders holders;
};
// Errors name the field (a Lease whose annotation is not ours to read is an
// error: the breaker fails closed).
Result<BreakerLease> ParseLease(std::string_view json);
std::string NewLease(std::string_view name, std::string_view ns);  // the POST body
// The PUT body: the Lease as read (its resourceVersion included), `holders` in the annotation.
std::string LeaseWithHolders(const BreakerLease& lease, const Holders& holders);
std::string FormatTime(int64_t unix_s);  // "2026-12-04T08:00:00Z"

// What the last read of the cluster saw, to tell a stale holder: one that was
// in the Lease when the node list was read, claimed its slot longer than
// kClaimGraceS ago, and whose node is gone or has no GpuHealthy=False of ours
// (resumed by hand, or an agent that died before it let its slot go). Nodes
// drained by us that the Lease lacks (an agent from before the Lease) are
// adopted, so they count.
struct Sighting {
  std::set<std::string> holders;        // in the Lease when the nodes were listed
  std::set<std::string> drained_by_us;  // GpuHealthy=False of ours in that list
};
bool StillHolds(const std::string& node, int64_t claimed, const Sighting& seen, int64_t now);
// The holders, stale ones dropped and the drained adopted, once `node` takes a
// slot (stamped `now`, a slot it held renewed); nullopt when `limit` other
// nodes hold one.
std::optional<Holders> PlanClaim(const Holders& current, const std::string& node, int limit,
                                 const Sighting& seen, int64_t now);
// The holders once `node` gave its slot back, stale ones dropped.
Holders PlanRelease(const Holders& current, const std::string& node, const Sighting& seen,
                    int64_t now);
// How many nodes other than `node` hold a slot (the breaker's count).
int OtherHolders(const Holders& current, const std::string& node, const Sighting& seen,
                 int64_t now);

}  // namespace gpuscope::remediate
