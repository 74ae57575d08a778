// Baseline rule generation: the shipped rule file is the generator's output,
// signals parse with clear errors, options are checked, extra signals and
// windows change what is generated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "baseline/rules.h"
#include "baseline/signals.h"
#include "test_paths.h"

namespace gpuscope::baseline {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(BaselineRules, ShippedFileIsTheGeneratorsOutput) {
  Result<std::string> text = RenderRules(RuleOptions{});
  ASSERT_TRUE(text.ok()) << text.status().message();
  EXPECT_EQ(*text,
            ReadFile(test_support::SourceDir() + "/deploy/prometheus/rules/gpu-baselines.yml"))
      << "regenerate: build/release/gpuscope baseline rules > "
         "deploy/prometheus/rules/gpu-baselines.yml";
}

TEST(BaselineRules, QuantilesReadTheFiveMinuteAggregatesOnly) {
  std::string text = *RenderRules(RuleOptions{});
  EXPECT_THAT(text, HasSubstr("quantile_over_time(0.05, gpuscope:workload_signal:avg5m[14d])"));
  EXPECT_THAT(text, HasSubstr("quantile_over_time(0.95, gpuscope:workload_signal:avg5m[14d])"));
  // No range over a raw family longer than 5 minutes.
  EXPECT_THAT(text, Not(HasSubstr("_total{gpu_instance=\"\"}[14d]")));
  EXPECT_THAT(text, HasSubstr("count_over_time(gpuscope:workload_signal:avg5m[14d]) < bool 2016"));
  EXPECT_THAT(text, HasSubstr("interval: 5m"));
  EXPECT_THAT(text, HasSubstr("interval: 60m"));
}

TEST(BaselineRules, AlertsOnlyForSignalsWithABadDirection) {
  std::string text = *RenderRules(RuleOptions{});
  for (const char* name :
       {"GpuWorkloadSmActivityBelowBaseline", "GpuWorkloadIdleAboveBaseline",
        "GpuWorkloadTemperatureAboveBaseline", "GpuWorkloadThrottleAboveBaseline"}) {
    EXPECT_THAT(text, HasSubstr(std::string("alert: ") + name));
  }
  EXPECT_THAT(text, Not(HasSubstr("TensorActive")));
  EXPECT_THAT(text, HasSubstr(") < -3\n"));
  EXPECT_THAT(text, HasSubstr(") > 3\n"));
}

TEST(BaselineRules, ExtraSignalAndWindow) {
  RuleOptions o;
  Result<Signal> s = ParseSignal(
      "step_time_seconds:rising:0.005:avg_over_time(app_step_time_seconds{workload!=\"\"}[5m])");
  ASSERT_TRUE(s.ok()) << s.status().message();
  o.signals.push_back(*s);
  o.window_days = 28;
  o.warmup_days = 10;
  o.k = 4;
  std::string text = *RenderRules(o);
  EXPECT_THAT(text, HasSubstr("signal: step_time_seconds"));
  EXPECT_THAT(text, HasSubstr("alert: GpuWorkloadStepTimeSecondsAboveBaseline"));
  EXPECT_THAT(text, HasSubstr("gpuscope:workload_signal:p50_28d"));
  EXPECT_THAT(text, HasSubstr("< bool 2880"));
  EXPECT_THAT(text, HasSubstr(") > 4\n"));
  EXPECT_THAT(text, HasSubstr("/runbooks/baselines.md#alerts-on-extra-signals"));
}

TEST(BaselineSignals, ParseErrorsNameTheProblem) {
  EXPECT_THAT(ParseSignal("x:rising:1").status().message(), HasSubstr("NAME:DIRECTION:FLOOR:EXPR"));
  EXPECT_THAT(ParseSignal("X:rising:1:up").status().message(), HasSubstr("lower case"));
  EXPECT_THAT(ParseSignal("x:up:1:up").status().message(), HasSubstr("not falling, rising"));
  EXPECT_THAT(ParseSignal("x:none:0:up").status().message(), HasSubstr("> 0"));
  EXPECT_THAT(ParseSignal("x:none:abc:up").status().message(), HasSubstr("not a number"));
  EXPECT_THAT(ParseSignal("x:none:1: ").status().message(), HasSubstr("empty expression"));
  Result<Signal> ok = ParseSignal("qps:falling:2:sum by (a) (rate(x[5m:1m]))");
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(ok->per_gpu, "sum by (a) (rate(x[5m:1m]))");
  EXPECT_EQ(AlertName(*ok), "GpuWorkloadQpsBelowBaseline");
}

TEST(BaselineRules, OptionsAreChecked) {
  RuleOptions o;
  o.warmup_days = 15;
  EXPECT_THAT(RenderRules(o).status().message(), HasSubstr("warm-up"));
  o = {};
  o.sustain_minutes = 7;
  EXPECT_THAT(RenderRules(o).status().message(), HasSubstr("multiple of 5"));
  o = {};
  o.signals.push_back(DefaultSignals()[0]);
  EXPECT_THAT(RenderRules(o).status().message(), HasSubstr("given twice"));
  o = {};
  o.signals.clear();
  EXPECT_FALSE(RenderRules(o).ok());
}

}  // namespace
}  // namespace gpuscope::baseline
