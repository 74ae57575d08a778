// gpuscope_gpu_holder_sm_share_ratio: each holder of a shared GPU with its
// measured share of the GPU's SM time, in both attribution-label modes;
// absent where NVML gave no per-process samples and on MIG.
#include <gtest/gtest.h>

#include "export_test_util.h"

namespace gpuscope::prom {
namespace {

using testing::FullSnapshot;
using testing::Lines;

constexpr const char* kFamily = "gpuscope_gpu_holder_sm_share_ratio{";

Holder Pod(const std::string& pod) { return {"ml", pod, "main", "", pod}; }

ProcessInfo Process(unsigned pid, double share) {
  ProcessInfo p;
  p.pid = pid;
  p.sm_share = share;
  return p;
}

// GPU 0 time-sliced between pods a (pids 1 and 2) and b (pid 3), and a host
// process (pid 4); GPU 1 likewise but without per-process samples.
Snapshot SharedGpus() {
  Snapshot snapshot = FullSnapshot(2);
  auto a = std::make_shared<Attribution>();
  for (std::size_t i = 0; i < 2; ++i) {
    GpuSample& s = snapshot.samples[i];
    s.processes = {Process(1, 0.625), Process(2, 0.125), Process(3, 0.125), Process(4, 0.0625)};
    s.process_sm_measured = i == 0;
    a->holders[Attribution::DeviceKey(snapshot.gpus[i])] = {Pod("a"), Pod("b")};
  }
  a->processes[1] = a->processes[2] = Pod("a");
  a->processes[3] = Pod("b");
  snapshot.attribution = a;
  return snapshot;
}

TEST(RenderHolderShare, OneSeriesPerHolderInBothModes) {
  for (AttributionLabels mode : {AttributionLabels::kSeries, AttributionLabels::kInfo}) {
    RenderOptions options;
    options.attribution_labels = mode;
    Renderer renderer(options);
    const std::string body = *renderer.Render(SharedGpus(), {}, Format::kText);
    const auto lines = Lines(body, kFamily);
    ASSERT_EQ(lines.size(), 3u) << body;
    // The host process's use: nobody's, without holder labels.
    EXPECT_NE(lines[0].find("{gpu=\"0\",uuid=\"GPU-00000000-aaaa-bbbb-cccc-dddddddddddd\"} 0.0625"),
              std::string::npos)
        << lines[0];
    EXPECT_NE(lines[1].find(",namespace=\"ml\",pod=\"a\",container=\"main\",workload=\"a\"} 0.75"),
              std::string::npos)
        << lines[1];
    EXPECT_NE(lines[2].find(",pod=\"b\",container=\"main\",workload=\"b\"} 0.125"),
              std::string::npos)
        << lines[2];
    EXPECT_NE(body.find("# TYPE gpuscope_gpu_holder_sm_share_ratio gauge"), std::string::npos);
  }
}

TEST(RenderHolderShare, AbsentWithoutSamplesAttributionOrOnMig) {
  Renderer renderer(RenderOptions{});
  Snapshot snapshot = SharedGpus();
  snapshot.samples[0].process_sm_measured = false;
  EXPECT_EQ(renderer.Render(snapshot, {}, Format::kText)->find("gpuscope_gpu_holder_sm_share"),
            std::string::npos);
  snapshot.attribution = nullptr;
  EXPECT_EQ(renderer.Render(snapshot, {}, Format::kText)->find("gpuscope_gpu_holder_sm_share"),
            std::string::npos);
  Snapshot mig = SharedGpus();
  mig.gpus[0].gpu_instance_id = 1;
  mig.gpus[0].mig_profile = "3g.40gb";
  auto a = std::make_shared<Attribution>(*mig.attribution);
  a->holders[Attribution::DeviceKey(mig.gpus[0])] = {Pod("a"), Pod("b")};
  mig.attribution = a;
  EXPECT_EQ(renderer.Render(mig, {}, Format::kText)->find("gpuscope_gpu_holder_sm_share"),
            std::string::npos);
}

}  // namespace
}  // namespace gpuscope::prom
