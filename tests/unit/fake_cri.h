// A fake container runtime: the CRI's RuntimeService/ListContainers, in
// process, for the attribution tests. Serve it with grpc::ServerBuilder on a
// unix socket.
#pragma once

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <string>

#include "attribution/cri_v1.grpc.pb.h"

namespace gpuscope::attribution {

class FakeCri final : public runtime::v1::RuntimeService::Service {
 public:
  grpc::Status ListContainers(grpc::ServerContext*, const runtime::v1::ListContainersRequest*,
                              runtime::v1::ListContainersResponse* response) override {
    std::lock_guard lock(mu_);
    *response = answer_;
    return grpc::Status::OK;
  }
  // A container as the kubelet creates it (its labels name the pod).
  void Add(const std::string& id, const std::string& ns, const std::string& pod,
           const std::string& container) {
    std::lock_guard lock(mu_);
    runtime::v1::Container* c = answer_.add_containers();
    c->set_id(id);
    c->set_pod_sandbox_id("sandbox-" + pod);
    c->mutable_metadata()->set_name(container);
    auto& labels = *c->mutable_labels();
    labels["io.kubernetes.pod.namespace"] = ns;
    labels["io.kubernetes.pod.name"] = pod;
    labels["io.kubernetes.pod.uid"] = "uid-" + pod;
    labels["io.kubernetes.container.name"] = container;
  }
  // A container no kubelet made (no pod labels): left out by the client.
  void AddPlain(const std::string& id) {
    std::lock_guard lock(mu_);
    answer_.add_containers()->set_id(id);
  }

 private:
  std::mutex mu_;
  runtime::v1::ListContainersResponse answer_;
};

}  // namespace gpuscope::attribution
