// One sampling cycle on the simulated node: dispatch to the per-GPU workers,
// the NVML calls (answered by the in-process simulator, whose own physics is
// included in the time), merge, integrals, window append, publish. The clock
// advances 1 s per cycle, so slow (10 s) and PCIe (5 s) tiers come in the
// proportion they have at the default cadence.
#include <benchmark/benchmark.h>

#include "bench_common.h"

namespace gpuscope::bench {
namespace {

void BM_SampleCycle(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  double now = collect::SystemClock();
  SimNode node(gpus, [&now] { return now; });
  node.sampler().SampleOnce(true);
  uint64_t calls = 0;
  for (auto _ : state) {
    now += 1;
    calls += node.sampler().SampleOnce()->nvml_calls;
  }
  state.counters["nvml_calls_per_gpu"] =
      static_cast<double>(calls) / static_cast<double>(state.iterations()) / gpus;
}
BENCHMARK(BM_SampleCycle)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace gpuscope::bench
