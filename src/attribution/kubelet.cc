#include "attribution/kubelet.h"

#include <sys/stat.h>

#include "attribution/grpc_clients.h"
#include "base/module.h"

namespace gpuscope::attribution {

Result<std::vector<PodDevice>> ListGpuDevices(const KubeletOptions& options) {
  struct stat st {};
  if (::stat(options.socket.c_str(), &st) != 0) {  // checked before gRPC is loaded
    return Status::Unavailable("kubelet pod-resources socket " + options.socket + " is missing");
  }
  const auto& clients = ModuleTable(kGrpcModule, "gpuscope_grpc_clients", gpuscope_grpc_clients);
  if (!clients.ok()) return clients.status().Context("kubelet pod-resources client");
  Result<std::vector<PodDevice>> devices = (*clients)->list_devices(options);
  if (!devices.ok()) return devices.status();
  std::vector<PodDevice> granted;
  for (PodDevice& d : *devices) {
    if (IsGpuResource(d.resource, options.extra_resources)) granted.push_back(std::move(d));
  }
  return granted;
}

}  // namespace gpuscope::attribution
