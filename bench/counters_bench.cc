// Parsing dcgm-exporter counters files (start-up and SIGHUP reload cost).
#include <benchmark/benchmark.h>

#include <string>

#include "bench_common.h"
#include "export/counters.h"

namespace gpuscope::bench {
namespace {

void BM_ParseDefaultCounters(benchmark::State& state) {
  const std::string_view text = prom::kDefaultCountersCsv;
  for (auto _ : state) {
    auto parsed = prom::ParseCounters(text, "default-counters.csv");
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseDefaultCounters)->Unit(benchmark::kMicrosecond);

void BM_ParseAllCounters(benchmark::State& state) {
  const std::string text = AllCountersCsv();
  for (auto _ : state) {
    auto parsed = prom::ParseCounters(text, "all-counters.csv");
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ParseAllCounters)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuscope::bench
