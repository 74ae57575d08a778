// Lints rendered bodies with promtool (Debian's prometheus package), as
// Prometheus' own parser and conventions see them.
#include <gtest/gtest.h>

#include <ctime>
#include <string>

#include "export/render.h"
#include "export_test_util.h"
#include "promtool_util.h"
#include "test_need.h"

namespace gpuscope::prom {
namespace {

using test_support::HavePromtool;
using test_support::Lint;
using test_support::RunPromtool;

std::vector<Family> SelfMetrics() {
  return {{"gpuscope_collector_up",
           "1 when the collector works.",
           FamilyType::kGauge,
           LabelBase::kNone,
           {{-1, {{"collector", "nvml"}}, 1}}},
          {"gpuscope_health_checks_total",
           "Health checks run.",
           FamilyType::kCounter,
           LabelBase::kNative,
           {{0, {{"check", "ecc"}}, 3}}}};
}

TEST(Promtool, NativeOutputHasNoLintFindings) {
  GPUSCOPE_NEED(HavePromtool(), "promtool not installed (Debian package prometheus)");
  Renderer renderer(testing::AllCounters(MetricSet::kNative));
  Snapshot snapshot = testing::FullSnapshot();
  snapshot.gpus[1].mig_profile = "1g.10gb";
  snapshot.gpus[1].gpu_instance_id = 1;
  snapshot.gpus[1].mig_uuid = "MIG-1";
  std::string body = *renderer.Render(snapshot, SelfMetrics()).text;
  ASSERT_NE(body.find("gpuscope_clock_throttle_seconds_total"), std::string::npos);
  Lint lint = RunPromtool(body);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.output, "");
}

// dcgm-exporter's names break the naming conventions (no unit suffix, counters
// without _total, camelCase labels), which promtool reports with exit code 3;
// a body that does not parse would exit 1.
TEST(Promtool, DcgmOutputParses) {
  GPUSCOPE_NEED(HavePromtool(), "promtool not installed (Debian package prometheus)");
  Renderer renderer(testing::AllCounters(MetricSet::kBoth));
  std::string body = *renderer.Render(testing::FullSnapshot(), SelfMetrics()).text;
  ASSERT_NE(body.find("DCGM_FI_DEV_FB_USED{"), std::string::npos);
  Lint lint = RunPromtool(body);
  EXPECT_EQ(lint.exit_code, 3) << lint.output;
  EXPECT_EQ(lint.output.find("error"), std::string::npos) << lint.output;
  // Every finding is about a DCGM name.
  std::size_t start = 0;
  while (start < lint.output.size()) {
    std::size_t end = lint.output.find('\n', start);
    std::string line = lint.output.substr(start, end - start);
    EXPECT_EQ(line.rfind("DCGM_", 0), 0u) << line;
    start = end == std::string::npos ? lint.output.size() : end + 1;
  }
}

// CPU time of this thread (the machine may be shared; wall time would lie).
double ThreadCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Not an assertion (no speed asserts): prints the CPU cost of one cycle.
TEST(Promtool, ReportsRenderTimeForEightGpus) {
  struct Case {
    const char* name;
    RenderOptions options;
  };
  Case cases[] = {{"default counters + native", RenderOptions{}},
                  {"every dcgm and native family", testing::AllCounters(MetricSet::kBoth)}};
  Snapshot snapshot = testing::FullSnapshot();
  for (Case& c : cases) {
    Renderer renderer(c.options);
    renderer.Render(snapshot);
    constexpr int kRounds = 200;
    std::size_t bytes = renderer.Render(snapshot, {}, Format::kText)->size();
    double start = ThreadCpuSeconds();
    for (int i = 0; i < kRounds; ++i) renderer.Render(snapshot, {}, Format::kText);
    double text_us = (ThreadCpuSeconds() - start) * 1e6 / kRounds;
    start = ThreadCpuSeconds();
    for (int i = 0; i < kRounds; ++i) renderer.Render(snapshot);
    double both_us = (ThreadCpuSeconds() - start) * 1e6 / kRounds;
    std::printf("render 8 GPUs, %s: %zu bytes, text %.0f us, text+openmetrics %.0f us\n", c.name,
                bytes, text_us, both_us);
    EXPECT_GT(bytes, 0u);
  }
}

}  // namespace
}  // namespace gpuscope::prom
