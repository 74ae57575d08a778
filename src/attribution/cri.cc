#include "attribution/cri.h"

#include <sys/stat.h>

#include "attribution/grpc_clients.h"
#include "base/module.h"

namespace gpuscope::attribution {

Result<std::map<std::string, CriContainer>> ListContainers(const CriOptions& options) {
  struct stat st {};
  if (::stat(options.socket.c_str(), &st) != 0) {  // checked before gRPC is loaded
    return Status::Unavailable("container runtime socket " + options.socket + " is missing");
  }
  const auto& clients = ModuleTable(kGrpcModule, "gpuscope_grpc_clients", gpuscope_grpc_clients);
  if (!clients.ok()) return clients.status().Context("CRI client");
  return (*clients)->list_containers(options);
}

const CriContainer* FindContainer(const std::map<std::string, CriContainer>& containers,
                                  const std::string& id) {
  if (id.empty()) return nullptr;
  if (const auto it = containers.find(id); it != containers.end()) return &it->second;
  const CriContainer* found = nullptr;
  for (const auto& [known, container] : containers) {
    const bool related = known.starts_with(id) || id.starts_with(known);
    if (!related) continue;
    if (found) return nullptr;  // ambiguous
    found = &container;
  }
  return found;
}

}  // namespace gpuscope::attribution
