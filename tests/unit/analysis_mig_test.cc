// A MIG instance has no utilization of its own (NVML answers it per GPU
// only): the diagnosis judges it on its own GPM activity, never its parent's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "analysis/diagnosis.h"
#include "analysis_test_util.h"

namespace gpuscope::analysis {
namespace {

using test_util::FakeGpu;
using test_util::Fill;
using test_util::Level;
using test_util::MakeGpu;
using ::testing::Contains;
using ::testing::Not;

// A 3g.40gb instance whose points carry GPM graphics-engine activity in place
// of utilization, as the sampler reads a MIG device.
FakeGpu MigInstance(double activity_percent, double sm_percent) {
  FakeGpu g = MakeGpu(true);
  g.info.gpu_instance_id = 1;
  g.info.compute_instance_id = 0;
  g.info.mig_uuid = "MIG-1";
  g.info.mig_profile = "3g.40gb";
  Fill(g, 300, [&](int, Level& l) {
    l.util = activity_percent;
    l.sm = sm_percent;
  });
  for (WindowPoint& p : g.points) {
    p.values[Index(Metric::kGrEngineActive)] = p.values[Index(Metric::kGpuUtil)];
    p.present.set(Index(Metric::kGrEngineActive));
    p.present.reset(Index(Metric::kGpuUtil));
  }
  g.latest.Clear(Metric::kGpuUtil);
  g.latest.Set(Metric::kGrEngineActive, activity_percent);
  return g;
}

std::vector<FindingKind> Kinds(const FakeGpu& g) {
  std::vector<FindingKind> out;
  for (const Finding& f : Diagnose(g.info, g.points, g.latest, {})) out.push_back(f.kind);
  return out;
}

TEST(DiagnoseMig, AnIdleInstanceIsIdleOnItsOwnActivity) {
  EXPECT_THAT(Kinds(MigInstance(0, 0)), Contains(FindingKind::kIdle));
}

TEST(DiagnoseMig, ABusyInstanceIsNotIdle) {
  const auto kinds = Kinds(MigInstance(97, 85));
  EXPECT_THAT(kinds, Not(Contains(FindingKind::kIdle)));
  EXPECT_THAT(kinds, Contains(FindingKind::kComputeBound));
}

}  // namespace
}  // namespace gpuscope::analysis
