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

class VgpuDiagnosis : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::filesystem::path scenario =
        std::filesystem::path(test_support::SourceDir()) / "sim/scenarios/vgpu/contention.yaml";
    test_support::ScopedEnv env("GPUSCOPE_SIM_SCENARIO", scenario.string());
    collect::SteppedOptions o;
    o.nvml_path = test_support::SimLibraryPath();
    o.end_seconds = 300;
    Result<collect::SteppedRun> run = collect::SampleSteps(o);
    ASSERT_TRUE(run.ok()) << run.status().message();
    results_ = RunDiagnose(*run->snapshot, run->sampler->window(), RunOptions{});
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

}  // namespace
}  // namespace gpuscope::analysis
