// The Kubernetes actuator: marks the node through the API server with the
// pod's service account (in-cluster config), through the project's libcurl
// module (baseline/http_fetch.h, loaded on first use).
//
//   read:   GET   /api/v1/nodes                 (the node, and the breaker's count)
//   drain:  PATCH /api/v1/nodes/NODE/status     strategic merge patch: condition
//           GpuHealthy=False, reason "Gpuscope<Finding>", message = the reason
//           ("gpuscope: XID 79 on GPU 3 (GPU-...) <runbook>")
//           PATCH /api/v1/nodes/NODE            JSON patch (with --remediate-taint):
//           test resourceVersion, add the NoSchedule taint gpuscope.io/gpu-unhealthy
//   resume: the condition back to True, our taint removed (the same two PATCHes)
//
// "Drained" is the condition GpuHealthy=False; it is ours when its message
// starts with "gpuscope:". The node opts out with the label
// gpuscope.io/remediate=false. The API server is
// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT, the token and
// CA are read from the service-account folder at each request (the kubelet
// rotates the token). RBAC: deploy/k8s/rbac-remediate.yaml.
//
// Thread safety: one thread per KubernetesActuator.
#pragma once

#include <string>
#include <string_view>

#include "remediate/actuator.h"

namespace gpuscope::remediate {

inline constexpr std::string_view kConditionType = "GpuHealthy";
inline constexpr std::string_view kTaintKey = "gpuscope.io/gpu-unhealthy";
inline constexpr std::string_view kOptOutLabel = "gpuscope.io/remediate";

struct KubernetesOptions {
  std::string node;  // empty: $NODE_NAME, else the short host name
  // Empty: https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT
  std::string api_server;
  std::string serviceaccount_dir = "/var/run/secrets/kubernetes.io/serviceaccount";
  bool taint = false;  // also add the NoSchedule taint
  double timeout_s = 10;
};

// The view of `node` from a NodeList's JSON (pure); `*resource_version` and
// `*taints` (a JSON array, "[]" when none) get the node's.
NodeView ParseNodeList(std::string_view json, std::string_view node, std::string* resource_version,
                       std::string* taints);

// The bodies of the PATCHes (pure; `now` is an RFC 3339 time).
std::string ConditionPatch(bool healthy, std::string_view reason, std::string_view message,
                           std::string_view now);
// JSON patch setting spec.taints to `taints` (a JSON array) with ours added or
// removed, after testing `resource_version`.
std::string TaintPatch(std::string_view taints, bool add, std::string_view resource_version);

class KubernetesActuator : public Actuator {
 public:
  explicit KubernetesActuator(KubernetesOptions options);
  std::string_view Name() const override { return "kubernetes"; }
  const std::string& Node() const override { return options_.node; }
  NodeView Read() override;
  Result<DrainResult> Drain(const Decision& d) override;
  Status Resume() override;

 private:
  Result<std::string> Call(const std::string& method, const std::string& path,
                           const std::string& content_type, const std::string& body);
  Status SetCondition(bool healthy, const std::string& reason, const std::string& message);
  Status SetTaint(bool add);

  KubernetesOptions options_;
  std::string resource_version_, taints_ = "[]";  // from the last Read
};

}  // namespace gpuscope::remediate
