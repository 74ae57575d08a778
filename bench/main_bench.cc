// gpuscope_bench's main. Without --mode it runs the Google Benchmark
// micro-benchmarks (every benchmark flag works). The modes serve
// bench/harness.py:
//   --mode=counters                 prints a counters file with every DCGM-named metric on
//   --mode=cycles --gpus=N [--cycles=C] [--interval=S]
//       sampler + serve's publish hook on the simulated node, C cycles with
//       the clock advancing S seconds each (default 20 x 1 s). Under
//       callgrind, the cycles are dumped as part "cycles" and C renders of the
//       last snapshot as part "render" (everything before is zeroed). With
//       GPUSCOPE_SIM_CONTROL set, the simulator's call counts are written to
//       <control>.before.json / <control>.after.json around the cycles.
//       Prints one JSON line: gpus, cycles, nvml_calls, body_bytes.
//   --mode=serve --gpus=N
//       serve's HTTP endpoints on 127.0.0.1 with the node's bodies (no
//       sampling afterwards); prints "port P", then obeys stdin lines
//       "zero" (callgrind: zero the counts) and "dump NAME" (dump them),
//       answering "ok" to each; ends at EOF or "quit".
//   --mode=detection
//       detection latency per finding kind from the onsets of
//       sim/scenarios/diagnosis, for diagnose and serve's gpuscope_bottleneck
//       (bench/detection.h); prints one JSON object.
#include <benchmark/benchmark.h>
#include <valgrind/callgrind.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include "base/log.h"
#include "bench_common.h"
#include "detection.h"
#include "export/render.h"
#include "http/server.h"
#include "serve/endpoints.h"
#include "serve/exporter.h"

namespace gpuscope::bench {
namespace {

struct Args {
  std::string mode;
  int gpus = 8;
  int cycles = 20;
  double interval = 1.0;
};

bool TakeFlag(const std::string& arg, const char* name, std::string* value) {
  const std::string prefix = std::string("--") + name + "=";
  if (arg.rfind(prefix, 0) != 0) return false;
  *value = arg.substr(prefix.size());
  return true;
}

Args ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string value;
    if (TakeFlag(argv[i], "mode", &args.mode)) continue;
    if (TakeFlag(argv[i], "gpus", &value)) args.gpus = std::atoi(value.c_str());
    if (TakeFlag(argv[i], "cycles", &value)) args.cycles = std::atoi(value.c_str());
    if (TakeFlag(argv[i], "interval", &value)) args.interval = std::atof(value.c_str());
  }
  return args;
}

serve::ExporterOptions ExporterFor(bool all_counters) {
  serve::ExporterOptions options;
  if (all_counters) options.render.counters = AllCounters();
  return options;
}

// Asks the simulator for its call counts and waits for the file.
void WriteSimStats(const std::string& path) {
  const char* control = std::getenv("GPUSCOPE_SIM_CONTROL");
  if (control == nullptr) return;
  std::remove(path.c_str());
  std::ofstream(control, std::ios::app) << "stats " << path << "\n";
  for (int i = 0; i < 200 && !std::ifstream(path); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int RunCycles(const Args& args) {
  double now = collect::SystemClock();
  SimNode node(
      args.gpus, [&now] { return now; }, args.interval);
  serve::Exporter exporter(ExporterFor(true), [&now] { return now; });
  collect::Sampler& sampler = node.sampler();
  sampler.OnPublish(
      [&](const SnapshotPtr& snapshot) { exporter.OnSnapshot(snapshot, sampler.window()); });
  sampler.SampleOnce(true);
  for (int i = 0; i < 12; ++i) {  // warm: GPM pairs, diagnosis, buffer pools
    now += args.interval;
    sampler.SampleOnce();
  }
  const std::string control =
      std::getenv("GPUSCOPE_SIM_CONTROL") ? std::getenv("GPUSCOPE_SIM_CONTROL") : "";
  WriteSimStats(control + ".before.json");
  uint64_t calls = 0;
  CALLGRIND_ZERO_STATS;
  for (int i = 0; i < args.cycles; ++i) {
    now += args.interval;
    calls += sampler.SampleOnce()->nvml_calls;
  }
  CALLGRIND_DUMP_STATS_AT("cycles");
  WriteSimStats(control + ".after.json");
  prom::RenderOptions render;
  render.counters = AllCounters();
  prom::Renderer renderer(render);
  SnapshotPtr latest = sampler.Latest();
  std::size_t bytes = renderer.Render(*latest).text->size();
  CALLGRIND_ZERO_STATS;
  for (int i = 0; i < args.cycles; ++i) benchmark::DoNotOptimize(renderer.Render(*latest));
  CALLGRIND_DUMP_STATS_AT("render");
  std::printf(
      "{\"gpus\": %zu, \"cycles\": %d, \"interval\": %g, \"nvml_calls\": %llu, "
      "\"body_bytes\": %zu}\n",
      latest->gpus.size(), args.cycles, args.interval, static_cast<unsigned long long>(calls),
      bytes);
  return 0;
}

int RunServe(const Args& args) {
  SimNode node(args.gpus);
  serve::Exporter exporter(ExporterFor(true), collect::SystemClock);
  collect::Sampler& sampler = node.sampler();
  sampler.OnPublish(
      [&](const SnapshotPtr& snapshot) { exporter.OnSnapshot(snapshot, sampler.window()); });
  sampler.SampleOnce(true);
  std::this_thread::sleep_for(std::chrono::milliseconds(120));
  sampler.SampleOnce(true);
  http::ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  http::Server server(options);
  serve::RegisterEndpoints(server, exporter);
  if (Status started = server.Start(); !started.ok()) {
    std::fprintf(stderr, "%s\n", started.message().c_str());
    return 1;
  }
  std::printf("port %u\n", server.port());
  std::fflush(stdout);
  std::string line;
  while (std::getline(std::cin, line) && line != "quit") {
    if (line == "zero") {
      CALLGRIND_ZERO_STATS;
    } else if (line.rfind("dump ", 0) == 0) {
      CALLGRIND_DUMP_STATS_AT(line.substr(5).c_str());
    }
    std::printf("ok\n");
    std::fflush(stdout);
  }
  server.Stop();
  return 0;
}

}  // namespace
}  // namespace gpuscope::bench

int main(int argc, char** argv) {
  using namespace gpuscope::bench;
  const Args args = ParseArgs(argc, argv);
  gpuscope::log::SetLevel(gpuscope::log::Level::kWarn);
  if (args.mode == "counters") {
    std::fputs(AllCountersCsv().c_str(), stdout);
    return 0;
  }
  if (args.mode == "cycles") return RunCycles(args);
  if (args.mode == "serve") return RunServe(args);
  if (args.mode == "detection") return RunDetectionLatency();
  if (!args.mode.empty()) {
    std::fprintf(stderr, "unknown --mode=%s (counters, cycles, serve, detection)\n",
                 args.mode.c_str());
    return 2;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
