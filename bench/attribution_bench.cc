// Attribution costs: one refresh of the kubelet mapping (gRPC List over a unix
// socket, parse, map to devices) plus the cgroup of one process per device
// (fixtures under a temporary /proc), for a full node of 110 pods on 8 GPUs
// and for 8 GPUs x 7 MIG instances shared by 30 pods, with the heap the
// published map holds (map_bytes, from mallinfo2); and rendering the bodies when
// every GPU carries pod labels (one GPU time-sliced by 4 pods) against
// BM_Render/8 without attribution.
#include <benchmark/benchmark.h>
#include <malloc.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include "attribution/service.h"
#include "bench_common.h"
#include "export/render.h"
#include "fake_kubelet.h"

namespace gpuscope::bench {
namespace {

using attribution::AddPod;

GpuInfo Gpu(unsigned index) {
  GpuInfo gpu;
  gpu.index = gpu.minor_number = index;
  gpu.uuid = "GPU-" + std::to_string(10000000 + index) + "-aaaa-bbbb-cccc-dddddddddddd";
  return gpu;
}

// A kubelet serving `answer` on a socket of its own for the benchmark's life.
struct Kubelet {
  explicit Kubelet(const v1::ListPodResourcesResponse& answer) {
    dir = std::filesystem::temp_directory_path() / ("gpuscope-bench-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    service.Set(answer);
    grpc::ServerBuilder builder;
    builder.AddListeningPort("unix://" + (dir / "kubelet.sock").string(),
                             grpc::InsecureServerCredentials());
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~Kubelet() {
    server->Shutdown();
    std::filesystem::remove_all(dir);
  }
  attribution::ServiceOptions Options() const {
    attribution::ServiceOptions o;
    o.kubernetes = true;
    o.kubelet.socket = (dir / "kubelet.sock").string();
    o.proc_root = (dir / "proc").string();
    return o;
  }
  // One containerd process per device, pids from 1000, cgroups under dir/proc.
  attribution::DeviceProcesses OneProcessEach(const std::vector<GpuInfo>& devices) const {
    attribution::DeviceProcesses out;
    unsigned pid = 1000;
    for (const GpuInfo& d : devices) {
      if (d.mig_enabled && !d.is_mig()) continue;  // MIG parents: processes are on instances
      const auto folder = dir / "proc" / std::to_string(pid);
      std::filesystem::create_directories(folder);
      std::ofstream(folder / "cgroup")
          << "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod0f9e8d7c_6b5a_"
             "4c3d_9e2f_1a0b9c8d7e6f.slice/cri-containerd-"
          << std::string(60, 'a') << pid << ".scope\n";
      out[Attribution::DeviceKey(d)].push_back({pid++, "python3"});
    }
    return out;
  }
  std::filesystem::path dir;
  attribution::FakeKubelet service;
  std::unique_ptr<grpc::Server> server;
};

void Refresh(benchmark::State& state, const v1::ListPodResourcesResponse& answer,
             const std::vector<GpuInfo>& devices) {
  Kubelet kubelet(answer);
  const attribution::ServiceOptions options = kubelet.Options();
  const attribution::DeviceProcesses processes = kubelet.OneProcessEach(devices);
  size_t holders = 0, named = 0;
  for (auto _ : state) {
    const Attribution a = attribution::Collect(options, devices, processes);
    holders = 0;
    for (const auto& [key, of] : a.holders) holders += of.size();
    named = a.processes.size();
  }
  // The heap the published map holds, measured on one more refresh.
  const auto before = static_cast<double>(mallinfo2().uordblks);
  {
    const Attribution a = attribution::Collect(options, devices, processes);
    state.counters["map_bytes"] = static_cast<double>(mallinfo2().uordblks) - before;
  }
  state.counters["holders"] = static_cast<double>(holders);
  state.counters["processes_named"] = static_cast<double>(named);
  state.counters["answer_bytes"] = static_cast<double>(answer.ByteSizeLong());
}

// 110 pods (the kubelet's default maximum), 8 of them with a GPU each.
void BM_AttributionRefreshWholeGpus(benchmark::State& state) {
  std::vector<GpuInfo> devices;
  v1::ListPodResourcesResponse answer;
  for (unsigned i = 0; i < 8; ++i) devices.push_back(Gpu(i));
  for (int p = 0; p < 110; ++p) {
    const bool gpu = p < 8;
    AddPod(answer, "team-" + std::to_string(p % 7), "worker-7d9f8c6b4-" + std::to_string(p), "main",
           gpu ? "nvidia.com/gpu" : "example.com/nic",
           {gpu ? devices[p].uuid : "nic" + std::to_string(p)});
  }
  Refresh(state, answer, devices);
}
BENCHMARK(BM_AttributionRefreshWholeGpus)->Unit(benchmark::kMicrosecond);

// 8 GPUs x 7 MIG instances (1g slices), 30 pods holding 56 slices between them.
void BM_AttributionRefreshMig(benchmark::State& state) {
  std::vector<GpuInfo> devices;
  std::vector<std::string> slices;
  for (unsigned i = 0; i < 8; ++i) {
    devices.push_back(Gpu(i));
    devices.back().mig_enabled = true;
    for (unsigned gi = 0; gi < 7; ++gi) {
      GpuInfo mig = devices.back();
      mig.gpu_instance_id = gi + 7;
      mig.compute_instance_id = 0;
      mig.mig_uuid = "MIG-" + std::to_string(i * 7 + gi) + "-1111-2222-3333-444455556666";
      mig.mig_profile = "1g.10gb";
      devices.push_back(mig);
      slices.push_back(mig.mig_uuid);
    }
  }
  v1::ListPodResourcesResponse answer;
  for (size_t p = 0; p < 30; ++p) {
    std::vector<std::string> ids;
    for (size_t s = p; s < slices.size(); s += 30) ids.push_back(slices[s]);
    AddPod(answer, "inference", "llm-serve-b2c4d-" + std::to_string(p), "vllm",
           "nvidia.com/mig-1g.10gb", ids);
  }
  Refresh(state, answer, devices);
}
BENCHMARK(BM_AttributionRefreshMig)->Unit(benchmark::kMicrosecond);

// Both bodies of the 8-GPU node, every GPU with a pod and GPU 0 time-sliced by 4.
void BM_RenderAttributed(benchmark::State& state) {
  auto snapshot = std::make_shared<Snapshot>(*NodeSnapshot(static_cast<int>(state.range(0))));
  auto attribution = std::make_shared<Attribution>();
  for (const GpuInfo& gpu : snapshot->gpus) {
    auto& holders = attribution->holders[Attribution::DeviceKey(gpu)];
    const int pods = gpu.index == 0 && !gpu.is_mig() ? 4 : 1;
    for (int p = 0; p < pods; ++p) {
      holders.push_back(
          {"team-a", "trainer-7d9f8c6b4-x2kq" + std::to_string(p), "main", "", "trainer"});
    }
  }
  snapshot->attribution = attribution;
  RenderBothBodies(state, *snapshot);
}
BENCHMARK(BM_RenderAttributed)->Arg(8)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuscope::bench
