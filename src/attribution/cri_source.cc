// The container runtime's CRI socket (--container-runtime-socket, cri.h):
// the pod of each container id, which names the pod of a GPU process from its
// cgroup.
#include "attribution/cri.h"
#include "attribution/source.h"

namespace gpuscope::attribution {
namespace {

class CriSource final : public Source {
 public:
  explicit CriSource(CriOptions options) : options_(std::move(options)) {}

  std::string_view name() const override { return "cri"; }

  Result<Evidence> Read(const Inputs&) const override {
    Result<std::map<std::string, CriContainer>> containers = ListContainers(options_);
    if (!containers.ok()) return containers.status();
    Evidence out;
    out.containers = std::move(*containers);
    return out;
  }

 private:
  const CriOptions options_;
};

}  // namespace

std::unique_ptr<Source> MakeCriSource(const ServiceOptions& options) {
  if (options.cri.socket.empty()) return nullptr;
  return std::make_unique<CriSource>(options.cri);
}

}  // namespace gpuscope::attribution
