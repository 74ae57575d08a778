// The gRPC clients' module (libgpuscope-grpc.so): the kubelet's
// pod-resources List and the CRI's ListContainers, each on a fresh channel
// (see kubelet.h and cri.h). The agent loads it through grpc_clients.h.
#include <grpcpp/grpcpp.h>

#include "attribution/cri_v1.grpc.pb.h"
#include "attribution/grpc_clients.h"
#include "attribution/podresources_v1.grpc.pb.h"

namespace gpuscope::attribution {
namespace {

std::shared_ptr<grpc::Channel> UnixChannel(const std::string& socket, int max_message_bytes) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(max_message_bytes);
  return grpc::CreateCustomChannel("unix://" + socket, grpc::InsecureChannelCredentials(), args);
}

Result<std::vector<PodDevice>> KubeletListDevices(const KubeletOptions& options) {
  const auto stub =
      v1::PodResourcesLister::NewStub(UnixChannel(options.socket, options.max_message_bytes));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options.timeout);
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, v1::ListPodResourcesRequest(), &response);
  if (!status.ok()) {
    return Status::Unavailable("kubelet pod-resources List on " + options.socket + ": " +
                               status.error_message());
  }
  std::vector<PodDevice> devices;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& container : pod.containers()) {
      for (const v1::ContainerDevices& granted : container.devices()) {
        for (const std::string& id : granted.device_ids()) {
          devices.push_back(
              {pod.namespace_(), pod.name(), container.name(), granted.resource_name(), id});
        }
      }
    }
  }
  return devices;
}

std::string Label(const runtime::v1::Container& c, const std::string& key) {
  const auto it = c.labels().find(key);
  return it == c.labels().end() ? std::string() : it->second;
}

Result<std::map<std::string, CriContainer>> CriListContainers(const CriOptions& options) {
  const auto stub =
      runtime::v1::RuntimeService::NewStub(UnixChannel(options.socket, options.max_message_bytes));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options.timeout);
  runtime::v1::ListContainersResponse response;
  const grpc::Status status =
      stub->ListContainers(&context, runtime::v1::ListContainersRequest(), &response);
  if (!status.ok()) {
    return Status::Unavailable("CRI ListContainers on " + options.socket + ": " +
                               status.error_message());
  }
  std::map<std::string, CriContainer> out;
  for (const runtime::v1::Container& c : response.containers()) {
    CriContainer entry{Label(c, "io.kubernetes.pod.namespace"), Label(c, "io.kubernetes.pod.name"),
                       Label(c, "io.kubernetes.pod.uid"), Label(c, "io.kubernetes.container.name")};
    if (entry.container.empty()) entry.container = c.metadata().name();
    if (c.id().empty() || entry.pod.empty()) continue;  // not a Kubernetes container
    out.emplace(c.id(), std::move(entry));
  }
  return out;
}

constexpr GrpcClients kClients = {KubeletListDevices, CriListContainers};

}  // namespace
}  // namespace gpuscope::attribution

extern "C" __attribute__((visibility("default"))) const gpuscope::attribution::GrpcClients*
gpuscope_grpc_clients() {
  return &gpuscope::attribution::kClients;
}
