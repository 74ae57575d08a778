#include "attribution/kubelet.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include "attribution/podresources_v1.grpc.pb.h"

namespace gpuscope::attribution {

Result<std::vector<PodDevice>> ListGpuDevices(const KubeletOptions& options) {
  struct stat st {};
  if (::stat(options.socket.c_str(), &st) != 0) {
    return Status::Unavailable("kubelet pod-resources socket " + options.socket + " is missing");
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  const auto channel = grpc::CreateCustomChannel("unix://" + options.socket,
                                                 grpc::InsecureChannelCredentials(), args);
  const auto stub = v1::PodResourcesLister::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options.timeout);
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, v1::ListPodResourcesRequest(), &response);
  if (!status.ok()) {
    return Status::Unavailable("kubelet pod-resources List on " + options.socket + ": " +
                               status.error_message());
  }
  std::vector<PodDevice> granted;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& container : pod.containers()) {
      for (const v1::ContainerDevices& devices : container.devices()) {
        if (!IsGpuResource(devices.resource_name(), options.extra_resources)) continue;
        for (const std::string& id : devices.device_ids()) {
          granted.push_back(
              {pod.namespace_(), pod.name(), container.name(), devices.resource_name(), id});
        }
      }
    }
  }
  return granted;
}

}  // namespace gpuscope::attribution
