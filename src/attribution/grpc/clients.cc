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

// "<call> on <socket>: <why>", saying so when the answer was over the limit.
Status CallError(const std::string& call, const std::string& socket, const grpc::Status& status,
                 int max_message_bytes) {
  std::string why = status.error_message();
  if (status.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED) {
    why = "answer refused, larger than the limit of " + std::to_string(max_message_bytes) +
          " bytes (" + why + ")";
  }
  return Status::Unavailable(call + " on " + socket + ": " + why);
}

// Refuses an answer listing more than `max` entries: each becomes strings of
// its own here, so the count bounds memory where the byte limit cannot.
Status CheckCount(const std::string& call, const std::string& socket, const char* what,
                  size_t count, size_t max) {
  if (count <= max) return Status::Ok();
  return Status::Unavailable(call + " on " + socket + ": answer refused, " + std::to_string(count) +
                             " " + what + " (limit " + std::to_string(max) + ")");
}

size_t CountDeviceIds(const v1::ListPodResourcesResponse& response) {
  size_t count = 0;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& container : pod.containers()) {
      for (const v1::ContainerDevices& granted : container.devices()) {
        count += static_cast<size_t>(granted.device_ids_size());
      }
      for (const v1::DynamicResource& claim : container.dynamic_resources()) {
        count += static_cast<size_t>(claim.claim_resources_size());
      }
    }
  }
  return count;
}

Result<std::vector<PodDevice>> KubeletListDevices(const KubeletOptions& options) {
  const auto stub =
      v1::PodResourcesLister::NewStub(UnixChannel(options.socket, options.max_message_bytes));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + options.timeout);
  v1::ListPodResourcesResponse response;
  const grpc::Status status = stub->List(&context, v1::ListPodResourcesRequest(), &response);
  constexpr char kCall[] = "kubelet pod-resources List";
  if (!status.ok()) return CallError(kCall, options.socket, status, options.max_message_bytes);
  GPUSCOPE_RETURN_IF_ERROR(CheckCount(kCall, options.socket, "device ids", CountDeviceIds(response),
                                      options.max_device_ids));
  std::vector<PodDevice> devices;
  for (const v1::PodResources& pod : response.pod_resources()) {
    for (const v1::ContainerResources& container : pod.containers()) {
      for (const v1::ContainerDevices& granted : container.devices()) {
        for (const std::string& id : granted.device_ids()) {
          devices.push_back(
              {pod.namespace_(), pod.name(), container.name(), granted.resource_name(), id, {}});
        }
      }
      // A kubelet before 1.31 names no driver, pool or device: nothing to match.
      for (const v1::DynamicResource& claim : container.dynamic_resources()) {
        for (const v1::ClaimResource& device : claim.claim_resources()) {
          if (device.driver_name().empty() || device.device_name().empty()) continue;
          devices.push_back(
              {pod.namespace_(), pod.name(), container.name(), device.driver_name(), "",
               DraDevice{device.driver_name(), device.pool_name(), device.device_name(),
                         claim.claim_namespace(), claim.claim_name()}});
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
  runtime::v1::ListContainersRequest request;
  request.mutable_filter()->mutable_state()->set_state(runtime::v1::CONTAINER_RUNNING);
  runtime::v1::ListContainersResponse response;
  const grpc::Status status = stub->ListContainers(&context, request, &response);
  constexpr char kCall[] = "CRI ListContainers";
  if (!status.ok()) return CallError(kCall, options.socket, status, options.max_message_bytes);
  GPUSCOPE_RETURN_IF_ERROR(CheckCount(kCall, options.socket, "containers",
                                      static_cast<size_t>(response.containers_size()),
                                      options.max_containers));
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
