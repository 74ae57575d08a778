// The kpi_regression tracker (otlp/regression.h) at its key bound: 1,024
// (KPI, GPU, workload) keys, each with an hour of history already kept, one
// join (Update, then Evaluate) a cycle at 1 s. Reports the totals kept
// (`points`, at most 1,024 x 256); the time is one join's.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <string>
#include <vector>

#include "otlp/regression.h"

namespace gpuscope::bench {
namespace {

constexpr int kKeys = 1024;

std::vector<otlp::KpiReading> Readings(double t) {
  std::vector<otlp::KpiReading> out;
  out.reserve(kKeys);
  for (int k = 0; k < kKeys; ++k) {
    const double count = 10 * t;
    out.push_back({otlp::Kpi::kStepDuration, "gpuscope_app_step_duration_seconds", k % 64,
                   fmt::format("job-{}", k / 64), count, 0.2 * count});
  }
  return out;
}

void BM_KpiRegressionJoin(benchmark::State& state) {
  otlp::RegressionTracker tracker;  // the defaults: 2 min against 1 h, 256 totals a key
  double t = 0;  // an hour in 17 s steps (the baseline's spacing), then 2 min a cycle a second
  for (; t < 3720; t += t < 3600 ? 17 : 1) tracker.Update(Readings(t), t);
  const std::vector<std::vector<std::string>> causes(64);
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<otlp::KpiReading> readings = Readings(t);
    state.ResumeTiming();
    tracker.Update(readings, t);
    benchmark::DoNotOptimize(tracker.Evaluate(t, causes));
    t += 1;
  }
  state.counters["points"] = static_cast<double>(tracker.points());
}
BENCHMARK(BM_KpiRegressionJoin)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuscope::bench
