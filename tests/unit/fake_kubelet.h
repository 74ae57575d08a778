// A fake kubelet: the pod-resources service, in process, for the attribution
// tests and benchmarks. Serve it with grpc::ServerBuilder on a unix socket.
#pragma once

#include <grpcpp/grpcpp.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <vector>

#include "attribution/podresources_v1.grpc.pb.h"

namespace gpuscope::attribution {

class FakeKubelet final : public v1::PodResourcesLister::Service {
 public:
  grpc::Status List(grpc::ServerContext*, const v1::ListPodResourcesRequest*,
                    v1::ListPodResourcesResponse* response) override {
    std::unique_lock lock(mu_);
    ++calls_;
    released_.wait(lock, [this] { return !held_; });
    *response = answer_;
    return grpc::Status::OK;
  }
  void Set(v1::ListPodResourcesResponse answer) {
    std::lock_guard lock(mu_);
    answer_ = std::move(answer);
  }
  // Hold() makes List wait for Release(): a kubelet that hangs. Release before
  // the server shuts down (Shutdown waits for calls in progress).
  void Hold() {
    std::lock_guard lock(mu_);
    held_ = true;
  }
  void Release() {
    {
      std::lock_guard lock(mu_);
      held_ = false;
    }
    released_.notify_all();
  }
  int calls() {
    std::lock_guard lock(mu_);
    return calls_;
  }

 private:
  std::mutex mu_;
  std::condition_variable released_;
  bool held_ = false;
  int calls_ = 0;
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

// One device of a DRA claim, as a 1.34 kubelet lists it
// (ContainerResources.dynamic_resources, KubeletPodResourcesDynamicResources).
struct FakeClaimDevice {
  std::string driver, pool, device;
};

inline void AddDraPod(v1::ListPodResourcesResponse& r, const std::string& ns,
                      const std::string& name, const std::string& container,
                      const std::string& claim, const std::vector<FakeClaimDevice>& devices) {
  auto* pod = r.add_pod_resources();
  pod->set_name(name);
  pod->set_namespace_(ns);
  auto* c = pod->add_containers();
  c->set_name(container);
  auto* dynamic = c->add_dynamic_resources();
  dynamic->set_claim_name(claim);
  dynamic->set_claim_namespace(ns);
  for (const FakeClaimDevice& d : devices) {
    auto* resource = dynamic->add_claim_resources();
    resource->set_driver_name(d.driver);
    resource->set_pool_name(d.pool);
    resource->set_device_name(d.device);
    resource->add_cdi_devices()->set_name("k8s." + d.driver + "/claim=" + claim + "-" + d.device);
  }
}

// An answer of about 20 MB (400 pods with 50 KB names), over the clients' 16 MiB limit.
inline v1::ListPodResourcesResponse OversizedAnswer() {
  v1::ListPodResourcesResponse r;
  const std::string padding(50000, 'p');
  for (int i = 0; i < 400; ++i) {
    AddPod(r, "ns", "pod-" + std::to_string(i) + "-" + padding, "c", "nvidia.com/gpu", {"GPU-0"});
  }
  return r;
}

}  // namespace gpuscope::attribution
