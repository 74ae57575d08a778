#include "attribution/cri.h"

#include <grpcpp/grpcpp.h>
#include <sys/stat.h>

#include "attribution/cri_v1.grpc.pb.h"

namespace gpuscope::attribution {
namespace {

std::string Label(const runtime::v1::Container& c, const std::string& key) {
  const auto it = c.labels().find(key);
  return it == c.labels().end() ? std::string() : it->second;
}

}  // namespace

Result<std::map<std::string, CriContainer>> ListContainers(const CriOptions& options) {
  struct stat st {};
  if (::stat(options.socket.c_str(), &st) != 0) {
    return Status::Unavailable("container runtime socket " + options.socket + " is missing");
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options.max_message_bytes);
  const auto channel = grpc::CreateCustomChannel("unix://" + options.socket,
                                                 grpc::InsecureChannelCredentials(), args);
  const auto stub = runtime::v1::RuntimeService::NewStub(channel);
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
