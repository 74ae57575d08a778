// A fake kubelet: the pod-resources service, in process, for the attribution
// tests and benchmarks. Serve it with grpc::ServerBuilder on a unix socket.
#pragma once

#include <grpcpp/grpcpp.h>

#include <mutex>
#include <string>
#include <vector>

#include "attribution/podresources_v1.grpc.pb.h"

namespace gpuscope::attribution {

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    std::lock_guard lock(mu_);
    *response = answer_;
    return grpc::Status::OK;
  }
  void Set(v1::ListPodResourcesResponse answer) {
    std::lock_guard lock(mu_);
    answer_ = std::move(answer);
  }

 private:
  std::mutex mu_;
  v1::ListPodResourcesResponse answer_;
};

inline void AddPod(v1::ListPodResourcesResponse& r, const std::string& ns, const std::string& name,
                   const std::string& container, const std::string& resource,
                   const std::vector<std::string>& ids) {
  auto* pod = r.add_pod_resources();
  pod->set_name(name);
  pod->set_namespace_(ns);
  auto* c = pod->add_containers();
  c->set_name(container);
  auto* d = c->add_devices();
  d->set_resource_name(resource);
  for (const auto& id : ids) d->add_device_ids(id);
}

}  // namespace gpuscope::attribution
