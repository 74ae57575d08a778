// Per-cycle export work: rendering the /metrics bodies from a snapshot, the
// whole publish hook of `gpuscope serve` (health, diagnosis monitor,
// self-metrics, render), and building and publishing the snapshot itself.
#include <benchmark/benchmark.h>

#include <atomic>
#include <memory>
#include <mutex>

#include "analysis/report.h"
#include "bench_common.h"
#include "export/render.h"
#include "serve/exporter.h"

namespace gpuscope::bench {
namespace {

prom::RenderOptions AllOn() {
  prom::RenderOptions options;
  options.counters = AllCounters();
  return options;
}

// Both bodies (0.0.4 and OpenMetrics) in one pass: what a cycle renders.
void BM_Render(benchmark::State& state) {
  SnapshotPtr snapshot = NodeSnapshot(static_cast<int>(state.range(0)));
  const std::size_t bytes = RenderBothBodies(state, *snapshot);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}
BENCHMARK(BM_Render)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

// The 0.0.4 body alone.
void BM_RenderText(benchmark::State& state) {
  SnapshotPtr snapshot = NodeSnapshot(static_cast<int>(state.range(0)));
  prom::Renderer renderer(AllOn());
  for (auto _ : state) {
    auto body = renderer.Render(*snapshot, {}, prom::Format::kText);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_RenderText)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

// dcgm-exporter's default counters (what a drop-in user gets).
void BM_RenderDefaultCounters(benchmark::State& state) {
  SnapshotPtr snapshot = NodeSnapshot(static_cast<int>(state.range(0)));
  prom::Renderer renderer{prom::RenderOptions{}};
  for (auto _ : state) {
    prom::Bodies bodies = renderer.Render(*snapshot);
    benchmark::DoNotOptimize(bodies);
  }
}
BENCHMARK(BM_RenderDefaultCounters)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

// serve's publish hook per cycle (copy, health, diagnosis monitor, self
// metrics, render) with a full 600-point window, without the diagnosis itself
// (BM_Diagnose), which the monitor re-runs only every 10 s.
// With a second argument 1, each cycle is also scraped once (its text body
// rendered): the hook renders nothing itself, bodies are rendered on demand.
void BM_ExporterCycle(benchmark::State& state) {
  const int gpus = static_cast<int>(state.range(0));
  const bool scraped = state.range(1) != 0;
  auto snapshot = std::make_shared<Snapshot>(*NodeSnapshot(gpus));
  std::unique_ptr<Window> window = FilledWindow(*snapshot, 600);
  serve::ExporterOptions options;
  options.render = AllOn();
  options.monitor.diagnose_interval_seconds = 1e12;
  double now = snapshot->timestamp;
  serve::Exporter exporter(options, [&now] { return now; });
  exporter.OnSnapshot(snapshot, *window);  // the first call diagnoses
  for (auto _ : state) {
    now += 1;
    snapshot->timestamp = now;
    exporter.OnSnapshot(snapshot, *window);
    if (scraped) benchmark::DoNotOptimize(exporter.Current()->Body(prom::Format::kText));
  }
  state.counters["body_bytes"] =
      static_cast<double>(exporter.Current()->Body(prom::Format::kText)->size());
}
BENCHMARK(BM_ExporterCycle)
    ->Args({8, 0})
    ->Args({64, 0})
    ->Args({8, 1})
    ->Args({64, 1})
    ->Unit(benchmark::kMicrosecond);

// The bottleneck diagnosis over a full 600-point window (the monitor runs it
// every 10 s; gpuscope diagnose once).
void BM_Diagnose(benchmark::State& state) {
  SnapshotPtr snapshot = NodeSnapshot(static_cast<int>(state.range(0)));
  std::unique_ptr<Window> window = FilledWindow(*snapshot, 600);
  for (auto _ : state) {
    auto results = analysis::RunDiagnose(*snapshot, *window, {});
    benchmark::DoNotOptimize(results);
  }
}
BENCHMARK(BM_Diagnose)->Arg(8)->Arg(64)->Unit(benchmark::kMillisecond);

// What the sampler does to publish a cycle: copy each slot's identity and
// values into a fresh Snapshot, share it, swap it in under the publish lock;
// a reader then takes it (Latest()).
void BM_SnapshotPublish(benchmark::State& state) {
  SnapshotPtr source = NodeSnapshot(static_cast<int>(state.range(0)));
  std::mutex mu;
  SnapshotPtr latest;
  for (auto _ : state) {
    Snapshot snapshot;
    snapshot.sequence = source->sequence + 1;
    snapshot.system = source->system;
    for (std::size_t i = 0; i < source->gpus.size(); ++i) {
      snapshot.gpus.push_back(source->gpus[i]);
      snapshot.samples.push_back(source->samples[i]);
    }
    auto published = std::make_shared<const Snapshot>(std::move(snapshot));
    {
      std::lock_guard lock(mu);
      latest = published;
    }
    SnapshotPtr reader;
    {
      std::lock_guard lock(mu);
      reader = latest;
    }
    benchmark::DoNotOptimize(reader);
  }
}
BENCHMARK(BM_SnapshotPublish)->Arg(8)->Arg(64)->Unit(benchmark::kMicrosecond);

// A scrape's share of the work once the cycle's body is rendered: take the
// latest cycle (atomic shared_ptr) and its body.
void BM_ScrapeBodyLoad(benchmark::State& state) {
  auto snapshot = std::make_shared<Snapshot>(*NodeSnapshot(8));
  Window window(Window::Options{600, 1});
  serve::ExporterOptions options;
  options.render = AllOn();
  serve::Exporter exporter(options, [t = snapshot->timestamp] { return t; });
  exporter.OnSnapshot(snapshot, window);
  for (auto _ : state) {
    exporter.CountScrape();
    auto body = exporter.Current()->Body(prom::Format::kText);
    benchmark::DoNotOptimize(body);
  }
}
BENCHMARK(BM_ScrapeBodyLoad)->Threads(1)->Threads(2);

}  // namespace
}  // namespace gpuscope::bench
