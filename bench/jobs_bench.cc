// The job ledger (jobs/ledger.h) when it keeps 10,000 ended Slurm jobs (each
// also its workload: 20,000 holders), each of which ran on 2 of 8 GPUs: the
// heap it holds (ledger_bytes, from mallinfo2; ended_jobs) and the cost of one
// cycle's Observe on the sampler's hook with 8 GPUs busy, which walks the
// kept holders to find the ones that ended.
#include <benchmark/benchmark.h>
#include <malloc.h>

#include <memory>
#include <string>

#include "gpuscope/attribution.h"
#include "jobs/ledger.h"

namespace gpuscope::bench {
namespace {

constexpr int kGpus = 8;
constexpr int kEndedJobs = 10000;

Snapshot Cycle(double t, int first_job) {
  Snapshot snap;
  snap.timestamp = t;
  snap.system.hostname = "node1";
  auto attribution = std::make_shared<Attribution>();
  for (int i = 0; i < kGpus; ++i) {
    GpuInfo info;
    info.index = static_cast<unsigned>(i);
    info.uuid = "GPU-" + std::to_string(10000000 + i) + "-aaaa-bbbb-cccc-dddddddddddd";
    GpuSample s;
    s.Set(Metric::kBusySeconds, t);
    s.Set(Metric::kSmActiveSeconds, t * 0.8);
    s.Set(Metric::kEnergyConsumption, t * 500000);
    s.Set(Metric::kGpuUtil, 100);
    s.Set(Metric::kMemoryUsed, 40e9);
    s.Set(Metric::kMemoryTotal, 80e9);
    s.Set(Metric::kClockReasons, 0);
    snap.gpus.push_back(info);
    snap.samples.push_back(s);
    Holder h;
    h.hpc_job = std::to_string(first_job + i / 2);  // one job per 2 GPUs
    h.workload = h.hpc_job;
    attribution->holders[info.uuid] = {h};
  }
  snap.attribution = attribution;
  return snap;
}

// 10,000 jobs of 2 GPUs run for 3 cycles each, 4 at a time; then the busy node.
void Fill(jobs::Ledger& ledger, double& t) {
  for (int job = 0; job < kEndedJobs; job += kGpus / 2) {
    for (int c = 0; c < 3; ++c) ledger.Observe(Cycle(t += 1, job), {});
  }
}

void BM_LedgerObserveWith10kEnded(benchmark::State& state) {
  const std::size_t before = mallinfo2().uordblks;
  auto ledger = std::make_unique<jobs::Ledger>(
      jobs::LedgerOptions{.keep_ended_seconds = 1e9, .max_ended = 2 * kEndedJobs});
  double t = 0;
  Fill(*ledger, t);
  const std::size_t bytes = mallinfo2().uordblks - before;
  const int running = kEndedJobs + 1000;
  for (auto _ : state) ledger->Observe(Cycle(t += 1, running), {});
  state.counters["ledger_bytes"] = static_cast<double>(bytes);
  state.counters["ended_holders"] = static_cast<double>(ledger->ended_count());
}
BENCHMARK(BM_LedgerObserveWith10kEnded)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gpuscope::bench
