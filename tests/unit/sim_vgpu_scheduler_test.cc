// The simulator's vGPU scheduler log and capabilities (issue 43, item 4): the
// log is derived from the instances' workloads, so busy instances of a
// time-sliced board take turns and wait for each other, and one busy
// instance alone never waits.
#include <map>
#include <memory>

#include "sim_test_support.h"

namespace gpuscope::sim::testing {
namespace {

constexpr const char* kBoards = R"(gpus:
  - model: h100-sxm
    vgpu:
      scheduler: best_effort
      timeslice_us: 2000
      instances:
        - {type: H100-20C, vm_id: vm-a, util: 1.0, memory_used_gib: 10}
        - {type: H100-20C, vm_id: vm-b, util: 1.0, memory_used_gib: 10}
        - {type: H100-20C, vm_id: vm-c, util: 1.0, memory_used_gib: 10}
  - model: h100-sxm
    vgpu:
      instances:
        - {type: H100-20C, vm_id: vm-d, util: 1.0, memory_used_gib: 10}
        - {type: H100-20C, vm_id: vm-e, util: 0, memory_used_gib: 10}
  - model: h100-sxm
)";

struct RunlistTotals {
  unsigned long long run = 0, preempted = 0, entries = 0;
};

// Per runlist: its entries, and its run and preempted time between its
// oldest and newest entry.
std::map<unsigned, RunlistTotals> Totals(const nvmlVgpuSchedulerLog_t& log) {
  std::map<unsigned, const nvmlVgpuSchedulerLogEntry_t*> first, last;
  std::map<unsigned, RunlistTotals> out;
  for (unsigned i = 0; i < log.entriesCount; ++i) {
    const nvmlVgpuSchedulerLogEntry_t& e = log.logEntries[i];
    if (!first.count(e.swRunlistId)) first[e.swRunlistId] = &e;
    last[e.swRunlistId] = &e;
    ++out[e.swRunlistId].entries;
  }
  for (auto& [id, t] : out) {
    t.run = last[id]->timeRunTotal - first[id]->timeRunTotal;
    t.preempted = last[id]->cumulativePreemptionTime - first[id]->cumulativePreemptionTime;
  }
  return out;
}

TEST_F(SimTest, VgpuSchedulerLogShowsBusyInstancesWaitingForEachOther) {
  ASSERT_EQ(Start(WriteTempFile("vgpu-sched.yaml", kBoards), {{"GPUSCOPE_SIM_FROZEN_TIME", "60"}}),
            0)
      << nv.LastError();
  auto log = std::make_unique<nvmlVgpuSchedulerLog_t>();
  ASSERT_EQ(nv.nvmlDeviceGetVgpuSchedulerLog(Device(0), log.get()), 0);
  EXPECT_EQ(log->schedulerPolicy, 1u);                                // best effort
  EXPECT_EQ(log->schedulerParams.vgpuSchedData.timeslice, 2000000u);  // ns, as nvml.h says
  EXPECT_LE(log->entriesCount, 200u);
  std::map<unsigned, RunlistTotals> busy = Totals(*log);
  ASSERT_EQ(busy.size(), 3u);
  for (const auto& [id, t] : busy) {
    EXPECT_GT(t.entries, 10u) << id;
    // A third of the time each: waits twice as long as it runs.
    EXPECT_NEAR(static_cast<double>(t.preempted) / (t.run + t.preempted), 2.0 / 3, 0.01) << id;
  }
  const nvmlVgpuSchedulerLogEntry_t& e = log->logEntries[log->entriesCount - 1];
  EXPECT_EQ(e.targetTimeSlice, 2000000u);  // ns
  EXPECT_EQ(e.timeRun, 2000000u);          // three busy: each runs its full slice

  ASSERT_EQ(nv.nvmlDeviceGetVgpuSchedulerLog(Device(1), log.get()), 0);
  std::map<unsigned, RunlistTotals> alone = Totals(*log);
  ASSERT_EQ(alone.size(), 1u);  // the idle instance does not run
  EXPECT_EQ(alone.begin()->second.preempted, 0u);

  EXPECT_EQ(nv.nvmlDeviceGetVgpuSchedulerLog(Device(2), log.get()), 3);  // bare metal
  EXPECT_EQ(nv.nvmlDeviceGetVgpuSchedulerLog(Device(0), nullptr), 2);
}

TEST_F(SimTest, VgpuSchedulerCapabilitiesListThePolicies) {
  ASSERT_EQ(Start(WriteTempFile("vgpu-sched.yaml", kBoards), {{"GPUSCOPE_SIM_FROZEN_TIME", "5"}}),
            0)
      << nv.LastError();
  nvmlVgpuSchedulerCapabilities_t caps{};
  ASSERT_EQ(nv.nvmlDeviceGetVgpuSchedulerCapabilities(Device(0), &caps), 0);
  EXPECT_EQ(caps.supportedSchedulers[0], 1u);
  EXPECT_EQ(caps.supportedSchedulers[2], 3u);
  EXPECT_LT(caps.minTimeslice, caps.maxTimeslice);
  EXPECT_EQ(nv.nvmlDeviceGetVgpuSchedulerCapabilities(Device(2), &caps), 3);
}

}  // namespace
}  // namespace gpuscope::sim::testing
