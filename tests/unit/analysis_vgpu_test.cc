// vGPU diagnosis (issue 43, item 4): each virtual GPU of a host board gets the
// activity verdicts a MIG instance gets, over its own window, nested under its
// board; a time-sliced board whose VMs wait for each other gets
// vgpu_contention. On the simulator, stepped through scenario time.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "analysis/report.h"
#include "collect/stepped.h"
#include "sim_fixture.h"
#include "test_paths.h"

namespace gpuscope::analysis {
namespace {

using ::testing::HasSubstr;

std::set<std::string> Kinds(const GpuDiagnosis& d) {
  std::set<std::string> out;
  for (const Finding& f : d.findings) out.emplace(KindName(f.kind));
  return out;
}

// The diagnosis of a scenario (relative to the source tree) after 300 s.
std::vector<GpuDiagnosis> DiagnoseScenario(const std::string& relative) {
  const std::filesystem::path scenario =
      std::filesystem::path(test_support::SourceDir()) / relative;
  test_support::ScopedEnv env("GPUSCOPE_SIM_SCENARIO", scenario.string());
  collect::SteppedOptions o;
  o.nvml_path = test_support::SimLibraryPath();
  o.end_seconds = 300;
  Result<collect::SteppedRun> run = collect::SampleSteps(o);
  if (!run.ok()) {
    ADD_FAILURE() << relative << ": " << run.status().message();
    return {};
  }
  return RunDiagnose(*run->snapshot, run->sampler->window(), RunOptions{});
}

class VgpuDiagnosis : public ::testing::Test {
 protected:
  void SetUp() override {
    results_ = DiagnoseScenario("sim/scenarios/vgpu/contention.yaml");
    ASSERT_EQ(results_.size(), 2u);
  }
  std::vector<GpuDiagnosis> results_;
};

TEST_F(VgpuDiagnosis, ThreeBusyVmsOnATimeSlicedBoardContendAndEachIsComputeBound) {
  const GpuDiagnosis& board = results_[0];
  EXPECT_EQ(Kinds(board), std::set<std::string>{"vgpu_contention"});
  const Finding& f = board.findings.front();
  EXPECT_THAT(f.verdict, HasSubstr("3 virtual GPUs"));
  EXPECT_THAT(f.verdict, HasSubstr("best_effort"));
  EXPECT_THAT(f.action, HasSubstr("fixed_share"));
  EXPECT_THAT(f.action, HasSubstr("MIG-backed vGPU"));
  ASSERT_FALSE(f.evidence.empty());
  EXPECT_EQ(f.evidence[0].signal, "vgpu_wait_mean");
  // Two thirds once the log has slices (the first read, at 0 s, has none).
  EXPECT_NEAR(f.evidence[0].value, 2.0 / 3, 0.05);
  EXPECT_EQ(f.evidence[0].threshold, 0.25);
  ASSERT_EQ(board.vgpus.size(), 3u);
  for (const GpuDiagnosis& v : board.vgpus) {
    ASSERT_TRUE(v.vgpu);
    EXPECT_EQ(Kinds(v), std::set<std::string>{"compute_bound"}) << v.vgpu->vm_id;
    EXPECT_EQ(v.slot, 0u);
  }
}

TEST_F(VgpuDiagnosis, HeldIdleAndAloneVmsGetTheirOwnVerdictsWithoutContention) {
  const GpuDiagnosis& board = results_[1];
  EXPECT_FALSE(FindKind(board.findings, FindingKind::kVgpuContention));
  ASSERT_EQ(board.vgpus.size(), 3u);
  EXPECT_EQ(Kinds(board.vgpus[0]), std::set<std::string>{"compute_bound"});
  EXPECT_EQ(Kinds(board.vgpus[1]), std::set<std::string>{"idle_held"});
  EXPECT_EQ(Kinds(board.vgpus[2]), std::set<std::string>{"idle"});
  EXPECT_EQ(board.vgpus[1].vgpu->vm_id, "7a1e0c2d-0005-4b8e-9c3f-2d4e6f8a0b05");
}

TEST_F(VgpuDiagnosis, TextAndJsonNameEachInstanceAndItsVmUnderItsBoard) {
  const std::string text = FormatText(results_);
  EXPECT_THAT(text, HasSubstr("GPU 1 vGPU "));
  EXPECT_THAT(text, HasSubstr("of VM 7a1e0c2d-0005-4b8e-9c3f-2d4e6f8a0b05"));
  EXPECT_THAT(text, HasSubstr("[vgpu_contention]"));
  const nlohmann::json j = nlohmann::json::parse(FormatJson(results_));
  ASSERT_EQ(j["gpus"].size(), 2u);
  const nlohmann::json& held = j["gpus"][1]["vgpus"][1];
  EXPECT_EQ(held["vm_id"], "7a1e0c2d-0005-4b8e-9c3f-2d4e6f8a0b05");
  EXPECT_EQ(held["vgpu_type"], "GRID H100-20C");
  EXPECT_FALSE(held["vgpu_uuid"].get<std::string>().empty());
  EXPECT_EQ(held["findings"][0]["kind"], "idle_held");
  EXPECT_EQ(j["gpus"][0]["findings"][0]["kind"], "vgpu_contention");
}

// sim/scenarios/diagnosis/vgpu-shares.yaml: the scheduler's policy decides
// what a wait means, and a fully carved board is not out of memory.
TEST(VgpuPolicies, AShareCapOnAnIdleBoardIsNamedAsTheCapNotAsTheOtherVms) {
  const std::vector<GpuDiagnosis> results =
      DiagnoseScenario("sim/scenarios/diagnosis/vgpu-shares.yaml");
  ASSERT_EQ(results.size(), 3u);
  // Best effort: two VMs asking 70% each get half and wait for each other.
  const Finding* best_effort = FindKind(results[0].findings, FindingKind::kVgpuContention);
  ASSERT_TRUE(best_effort);
  EXPECT_THAT(best_effort->verdict, HasSubstr("for their turn (best_effort scheduler"));
  EXPECT_THAT(best_effort->action, HasSubstr("give each a guaranteed share"));
  // Equal share, half the board idle: each busy VM waits on its quarter.
  const Finding* capped = FindKind(results[1].findings, FindingKind::kVgpuContention);
  ASSERT_TRUE(capped);
  EXPECT_THAT(capped->verdict, HasSubstr("on their share's cap while the board is busy only 50%"));
  EXPECT_THAT(capped->verdict, HasSubstr("equal_share scheduler"));
  EXPECT_THAT(capped->action, HasSubstr("switch the board to the best_effort scheduler"));
  EXPECT_THAT(capped->action, ::testing::Not(HasSubstr("give each a guaranteed share")));
  EXPECT_EQ(capped->evidence.back().signal, "board_util_mean");
  // Fixed share below every VM's share: nobody waits.
  EXPECT_TRUE(results[2].findings.empty()) << FormatText(results);
  // Each board's framebuffer is carved into its VMs' (the A100 and the H200
  // read full): no memory_capacity on a host board.
  for (const GpuDiagnosis& board : results) {
    EXPECT_FALSE(FindKind(board.findings, FindingKind::kMemoryCapacity)) << board.info.name;
  }
}

}  // namespace
}  // namespace gpuscope::analysis
