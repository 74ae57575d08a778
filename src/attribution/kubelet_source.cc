// The kubelet's pod-resources API (-k, kubelet.h): the pods each GPU or MIG
// instance is granted to. A kubelet restart replaces its socket file, which
// asks for a refresh at once.
#include <sys/stat.h>

#include "attribution/kubelet.h"
#include "attribution/source.h"

namespace gpuscope::attribution {
namespace {

// What identifies the socket file: a kubelet restart creates a new one.
struct SocketIdentity {
  bool exists = false;
  ino_t inode = 0;
  time_t mtime = 0;
  bool operator==(const SocketIdentity&) const = default;
};

SocketIdentity Identify(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return {};
  return {true, st.st_ino, st.st_mtime};
}

class KubeletSource final : public Source {
 public:
  explicit KubeletSource(KubeletOptions options)
      : options_(std::move(options)), socket_(Identify(options_.socket)) {}

  std::string_view name() const override { return "kubelet"; }

  Result<Evidence> Read(const Inputs& inputs) const override {
    const Result<std::vector<PodDevice>> granted = ListGpuDevices(options_);
    if (!granted.ok()) return granted.status();
    std::vector<std::vector<PodRef>> pods = BuildPodMap(*granted, inputs.devices);
    Evidence out;
    for (size_t i = 0; i < inputs.devices.size(); ++i) {
      if (!pods[i].empty())
        out.pods[Attribution::DeviceKey(inputs.devices[i])] = std::move(pods[i]);
    }
    return out;
  }

  bool WantsRefresh() override {
    const SocketIdentity now = Identify(options_.socket);
    if (now == socket_) return false;
    socket_ = now;
    return true;
  }

 private:
  const KubeletOptions options_;
  SocketIdentity socket_;  // as last seen
};

}  // namespace

std::unique_ptr<Source> MakeKubeletSource(const ServiceOptions& options) {
  if (!options.kubernetes) return nullptr;
  return std::make_unique<KubeletSource>(options.kubelet);
}

}  // namespace gpuscope::attribution
