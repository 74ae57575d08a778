// The kubelet's pod-resources API (-k, kubelet.h): the pods each GPU or MIG
// instance is granted to, by a device plugin or a DRA claim. A DRA device's
// UUID comes from the node's ResourceSlices (resource_slices.h), read here
// only once the kubelet lists a DRA device. A kubelet restart replaces its
// socket file, which asks for a refresh at once.
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
      : options_(std::move(options)),
        socket_(Identify(options_.socket)),
        slices_(options_.resource_slices) {}

  std::string_view name() const override { return "kubelet"; }

  Result<Evidence> Read(const Inputs& inputs) const override {
    Result<std::vector<PodDevice>> granted = ListGpuDevices(options_);
    if (!granted.ok()) return granted.status();
    Evidence out;
    ResolveDra(*granted, out);
    std::vector<std::vector<PodRef>> pods = BuildPodMap(*granted, inputs.devices);
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
  // Gives each DRA device its device id: the UUID its ResourceSlice names,
  // else what its name says (resource_slices.h).
  void ResolveDra(std::vector<PodDevice>& granted, Evidence& out) const {
    std::vector<const DraDevice*> wanted;
    for (const PodDevice& d : granted) {
      if (d.dra) wanted.push_back(&*d.dra);
    }
    if (wanted.empty() && slices_.lists() == 0) return;  // no DRA on this node (yet)
    const SliceIndex* index =
        wanted.empty() ? nullptr : slices_.Lookup(wanted, ResourceSliceReader::Clock::now());
    for (PodDevice& d : granted) {
      if (d.dra) d.device_id = DraDeviceId(*d.dra, index);
    }
    out.more_sources.push_back(slices_.state());
  }

  const KubeletOptions options_;
  SocketIdentity socket_;  // as last seen
  // Read is const for the sources' interface, and called by one thread at a
  // time (source.h): the slices it keeps between refreshes are its cache.
  mutable ResourceSliceReader slices_;
};

}  // namespace

std::unique_ptr<Source> MakeKubeletSource(const ServiceOptions& options) {
  if (!options.kubernetes) return nullptr;
  return std::make_unique<KubeletSource>(options.kubelet);
}

}  // namespace gpuscope::attribution
