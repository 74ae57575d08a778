// The table of the gRPC clients' module (libgpuscope-grpc.so, built from
// src/attribution/grpc/; base/module.h says why it is a module). kubelet.cc
// and cri.cc load it on the first call that finds its socket present, so a
// node without Kubernetes never maps gRPC.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "attribution/cri.h"
#include "attribution/kubelet.h"

namespace gpuscope::attribution {

inline constexpr char kGrpcModule[] = "libgpuscope-grpc.so";

struct GrpcClients {
  // Every device id granted to any container, whatever its resource name.
  Result<std::vector<PodDevice>> (*list_devices)(const KubeletOptions&);
  Result<std::map<std::string, CriContainer>> (*list_containers)(const CriOptions&);
};

}  // namespace gpuscope::attribution

// The module's entry point; weak, so it is null unless the process links the
// module's code in (the tests that serve a fake kubelet).
extern "C" const gpuscope::attribution::GrpcClients* gpuscope_grpc_clients() __attribute__((weak));
