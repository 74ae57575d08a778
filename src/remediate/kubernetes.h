// The Kubernetes actuator: marks the node through the API server with the
// pod's service account (in-cluster config), through the project's libcurl
// module (baseline/http_fetch.h, loaded on first use). What it reads and
// writes is parsed and built by kubernetes_objects.h.
//
//   read:   GET   /api/v1/nodes/NODE                 the node (whose drain, opt-out)
//           GET   /apis/coordination.k8s.io/v1/namespaces/NS/leases/gpuscope-remediation
//           GET   /api/v1/nodes?limit=500&continue=...  the breaker's count, page by page
//   drain:  PUT   the Lease, this node added (resourceVersion; 409: read again)
//           PATCH /api/v1/nodes/NODE/status     strategic merge patch: condition
//           GpuHealthy=False, reason "Gpuscope<Finding>", message = the reason
//           ("gpuscope: XID 79 on GPU 3 (GPU-...) <runbook>")
//           PATCH /api/v1/nodes/NODE            JSON patch (with --remediate-taint):
//           test resourceVersion, add the NoSchedule taint gpuscope.io/gpu-unhealthy
//   resume: the condition back to True, our taint removed (the same two
//           PATCHes), then the Lease without this node.
//
// The circuit breaker holds under concurrency: the Lease in the agent's
// namespace (the service account's `namespace` file) lists the nodes gpuscope
// holds drained, and a node is drained only once its PUT adding itself was
// accepted with fewer than Decision::breaker_limit others listed. Each PUT
// carries the resourceVersion read, so however many agents drain at once, at
// most that many hold a slot, with no transient overshoot. No slot:
// kBreakerOpen and the node is not touched. The Lease is created when missing.
//
// A taint PATCH that fails is retried with backoff (a fresh GET of the node
// before each try), each failure logged; a drain that still cannot add its
// taint is taken back (condition and slot) and fails, so the policy retries
// it whole; a resume that cannot remove it fails and is retried, the node
// still counted as ours.
//
// The node opts out with the label gpuscope.io/remediate=false. The API
// server, token and CA are baseline/kube_api.h's in-cluster configuration;
// the namespace is read from the service-account folder at each request. RBAC:
// deploy/k8s-remediation/rbac.yaml.
//
// Thread safety: one thread per KubernetesActuator.
#pragma once

#include <string>
#include <string_view>

#include "baseline/kube_api.h"
#include "remediate/actuator.h"
#include "remediate/kubernetes_objects.h"

namespace gpuscope::remediate {

struct KubernetesOptions {
  std::string node;  // empty: $NODE_NAME, else the short host name
  // Empty: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
  std::string api_server;
  std::string serviceaccount_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  bool taint = false;  // also add the NoSchedule taint
  double timeout_s = 10;
  int page_size = 500;  // nodes per page of the node list
  std::string lease_name = std::string(kLeaseName);
  int taint_tries = 6;             // taint PATCHes per drain or resume
  double taint_backoff_s = 0.25;   // before the second try, doubling up to taint_backoff_max_s
  double taint_backoff_max_s = 4;  // (0.25 + 0.5 + 1 + 2 + 4: under 8 s in all)
};

class KubernetesActuator : public Actuator {
 public:
  explicit KubernetesActuator(KubernetesOptions options);
  std::string_view Name() const override { return "kubernetes"; }
  const std::string& Node() const override { return options_.node; }
  NodeView Read() override;
  Result<DrainResult> Drain(const Decision& d) override;
  Status Resume() override;

 private:
  using Answer = baseline::KubeApi::Answer;
  // Any HTTP status is an answer; errors are transport, TLS or setup failures.
  Result<Answer> Send(const std::string& method, const std::string& path,
                      const std::string& content_type, const std::string& body);
  // A 2xx answer's body, else an error with the status and the server's message.
  Result<std::string> Call(const std::string& method, const std::string& path,
                           const std::string& content_type, const std::string& body);
  Result<NodeFacts> GetNode();
  // Pages through the node list: v.nodes and seen.drained_by_us.
  Status CountNodes(NodeView& v, Sighting& seen);
  struct LeasePaths {
    std::string ns, list, lease;
  };
  Result<LeasePaths> Lease();  // in the service account's namespace
  // The Lease; when there is none, an empty one, or (`create`) a new one.
  Result<BreakerLease> GetLease(const LeasePaths& at, bool create);
  Result<bool> ClaimSlot(int limit);
  Status ReleaseSlot();
  Status SetCondition(bool healthy, const std::string& reason, const std::string& message);
  Status SetTaint(bool add);

  KubernetesOptions options_;
  baseline::KubeApi api_;    // token, CA and TLS (baseline/kube_api.h)
  std::string node_path_;    // /api/v1/nodes/NODE
  NodeFacts node_;           // from the last Read (or the last answer about the node)
  Sighting seen_;            // from the last Read: who held a slot, who is drained by us
  BreakerLease read_lease_;  // from the last Read (object empty: there was none)
};

}  // namespace gpuscope::remediate
