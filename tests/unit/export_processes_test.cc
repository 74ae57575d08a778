// The per-process families: top N processes per device by memory with the
// rest summed into pid="other", each process with its own attribution labels,
// names only when opted in, and a MIG parent leaving its instances' processes
// to them.
#include <gtest/gtest.h>

#include <sstream>

#include "export_test_util.h"

namespace gpuscope::prom {
namespace {

using testing::FullSnapshot;
using testing::Lines;

ProcessInfo Process(unsigned pid, std::string name, uint64_t mib, double sm, uint8_t kinds) {
  ProcessInfo p;
  p.pid = pid;
  p.name = std::move(name);
  p.used_memory_bytes = mib << 20;
  p.sm_utilization = sm;
  p.memory_utilization = sm / 2;
  p.kinds = kinds;
  return p;
}

// GPU 0 runs four processes; GPU 1 none.
Snapshot FourProcesses() {
  Snapshot snapshot = FullSnapshot(2);
  snapshot.samples[0].processes = {
      Process(400, "python3", 1000, 0.5, kComputeProcess),
      Process(100, "Xorg", 10, 0.01, kGraphicsProcess),
      Process(300, "trainer", 4000, 0.25, kComputeProcess | kGraphicsProcess),
      Process(200, "client", 2000, 0.125, kMpsProcess)};
  snapshot.samples[1].processes.clear();
  auto a = std::make_shared<Attribution>();
  a->processes[300] = {"ml", "trainer-q7x4z", "main", "", "trainer"};
  a->processes[400] = {"", "", "", "4242", "4242"};
  snapshot.attribution = a;
  return snapshot;
}

TEST(RenderProcesses, OffByDefault) {
  Renderer renderer(RenderOptions{});
  const std::string body = *renderer.Render(FourProcesses(), {}, Format::kText);
  EXPECT_EQ(body.find("gpuscope_process_"), std::string::npos);
}

TEST(RenderProcesses, TopByMemoryThenTheRestSummed) {
  RenderOptions options;
  options.process_series = 2;
  Renderer renderer(options);
  const std::string body = *renderer.Render(FourProcesses(), {}, Format::kText);
  const auto memory = Lines(body, "gpuscope_process_memory_used_bytes{");
  ASSERT_EQ(memory.size(), 3u) << body;
  // The two largest (300 and 200) in pid order, then 400 + 100 as "other".
  EXPECT_NE(memory[0].find("gpu=\"0\""), std::string::npos);
  EXPECT_NE(memory[0].find(",pid=\"200\",type=\"mps\"} 2097152000"), std::string::npos)
      << memory[0];
  EXPECT_NE(memory[1].find(",namespace=\"ml\",pod=\"trainer-q7x4z\",container=\"main\","
                           "workload=\"trainer\",pid=\"300\",type=\"compute+graphics\"} "
                           "4194304000"),
            std::string::npos)
      << memory[1];
  EXPECT_NE(memory[2].find(",pid=\"other\"} " + std::to_string((1000ull + 10) << 20)),
            std::string::npos)
      << memory[2];
  EXPECT_EQ(body.find("process_name="), std::string::npos);  // names are opt-in
  const auto sm = Lines(body, "gpuscope_process_sm_utilization_ratio{");
  ASSERT_EQ(sm.size(), 3u);
  EXPECT_NE(sm[2].find("pid=\"other\"} 0.51"), std::string::npos) << sm[2];
  EXPECT_EQ(Lines(body, "gpuscope_process_memory_utilization_ratio{").size(), 3u);
  EXPECT_NE(body.find("# TYPE gpuscope_process_memory_used_bytes gauge"), std::string::npos);
}

TEST(RenderProcesses, NamesWhenOptedInAndNoOtherWhenAllFit) {
  RenderOptions options;
  options.process_series = 8;
  options.process_names = true;
  Renderer renderer(options);
  const std::string body = *renderer.Render(FourProcesses(), {}, Format::kText);
  const auto memory = Lines(body, "gpuscope_process_memory_used_bytes{");
  ASSERT_EQ(memory.size(), 4u);
  EXPECT_NE(memory[0].find("pid=\"100\",type=\"graphics\",process_name=\"Xorg\"}"),
            std::string::npos)
      << memory[0];
  EXPECT_NE(memory[3].find("hpc_job=\"4242\",workload=\"4242\",pid=\"400\""), std::string::npos)
      << memory[3];
  EXPECT_EQ(body.find("pid=\"other\""), std::string::npos);
}

TEST(RenderProcesses, MigParentLeavesInstanceProcessesToTheInstance) {
  Snapshot snapshot = FullSnapshot(1);
  GpuInfo mig = snapshot.gpus[0];
  snapshot.gpus[0].mig_enabled = true;
  mig.mig_enabled = true;
  mig.gpu_instance_id = 1;
  mig.compute_instance_id = 0;
  mig.mig_uuid = "MIG-1";
  mig.mig_profile = "3g.40gb";
  snapshot.gpus.push_back(mig);
  snapshot.samples.push_back(snapshot.samples[0]);
  ProcessInfo p = Process(500, "python3", 100, 0, kComputeProcess);
  p.sm_utilization.reset();  // NVML gives none on MIG
  p.memory_utilization.reset();
  p.gpu_instance_id = 1;
  p.compute_instance_id = 0;
  snapshot.samples[0].processes = {p};
  snapshot.samples[1].processes = {p};
  RenderOptions options;
  options.process_series = 4;
  Renderer renderer(options);
  const std::string body = *renderer.Render(snapshot, {}, Format::kText);
  const auto memory = Lines(body, "gpuscope_process_memory_used_bytes{");
  ASSERT_EQ(memory.size(), 1u) << body;
  EXPECT_NE(memory[0].find("uuid=\"MIG-1\",gpu_instance=\"1\""), std::string::npos) << memory[0];
  EXPECT_TRUE(Lines(body, "gpuscope_process_sm_utilization_ratio{").empty());
}

}  // namespace
}  // namespace gpuscope::prom
