#include "analysis/offline.h"

#include <cstdlib>
#include <memory>

namespace gpuscope::analysis {

Result<OfflineRun> SampleScenario(const OfflineOptions& options) {
  if (!options.scenario.empty()) setenv("GPUSCOPE_SIM_SCENARIO", options.scenario.c_str(), 1);
  if (!(options.step_seconds > 0) || options.end_seconds < options.start_seconds) {
    return Status::InvalidArgument("offline sampling needs step > 0 and end >= start");
  }
  // The sampler's clock and the simulator's both read `now`.
  auto now = std::make_shared<double>(options.start_seconds);
  using SetTime = void (*)(double);
  auto set_time = std::make_shared<SetTime>(nullptr);
  collect::SamplerOptions so;
  so.nvml_path = options.nvml_path;
  so.fast_interval_s = options.step_seconds;
  so.slow_interval_s = std::max(10.0, options.step_seconds);
  so.pcie_interval_s = std::max(options.step_seconds, 1.0);
  so.window_span_s = options.end_seconds - options.start_seconds + options.step_seconds;
  collect::LibraryOpener opener = [path = options.nvml_path, set_time,
                                   now]() -> Result<std::unique_ptr<nvml::Library>> {
    // Freeze the scenario clock before the inventory probe reads anything.
    auto lib = nvml::Library::Open(path);
    if (!lib.ok()) return lib.status();
    *set_time = reinterpret_cast<SetTime>((*lib)->FindSymbol("gpuscopeSimSetTime"));
    if (!*set_time) {
      return Status::NotSupported(path + ": not the simulator (no gpuscopeSimSetTime)");
    }
    (*set_time)(*now);
    return std::move(*lib);
  };
  OfflineRun run;
  run.sampler = std::make_unique<collect::Sampler>(
      so, [now] { return *now; }, opener);
  GPUSCOPE_RETURN_IF_ERROR(run.sampler->Open());
  for (double t = options.start_seconds; t <= options.end_seconds + 1e-9;
       t += options.step_seconds) {
    *now = t;
    (*set_time)(t);
    run.snapshot = run.sampler->SampleOnce(t == options.start_seconds);
  }
  return run;
}

}  // namespace gpuscope::analysis
