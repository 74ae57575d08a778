#include "collect/stepped.h"

#include <algorithm>
#include <memory>

#include "nvml/library.h"

namespace gpuscope::collect {

Result<SteppedRun> SampleSteps(const SteppedOptions& options) {
  if (!(options.step_seconds > 0) || options.end_seconds < options.start_seconds) {
    return Status::InvalidArgument("stepped sampling needs step > 0 and end >= start");
  }
  // The sampler's clock and the simulator's both read `now`.
  auto now = std::make_shared<double>(options.start_seconds);
  auto set_time = std::make_shared<nvml::SimHooks::SetTime>(nullptr);
  SamplerOptions so;
  so.nvml_path = options.nvml_path;
  so.fast_interval_s = options.step_seconds;
  so.slow_interval_s = std::max(10.0, options.step_seconds);
  so.pcie_interval_s = std::max(options.step_seconds, 1.0);
  so.devices = options.devices;
  so.window_span_s = options.window_span_s > 0
                         ? options.window_span_s
                         : options.end_seconds - options.start_seconds + options.step_seconds;
  LibraryOpener opener = [path = options.nvml_path, set_time,
                          now]() -> Result<std::unique_ptr<nvml::Library>> {
    auto lib = nvml::Library::Open(path);
    if (!lib.ok()) return lib.status();
    *set_time = (*lib)->sim().set_time;
    if (!*set_time) {
      return Status::NotSupported(path + ": not the simulator (no gpuscopeSimSetTime)");
    }
    // Freeze the scenario clock before the inventory probe reads anything.
    (*set_time)(*now);
    return std::move(*lib);
  };
  SteppedRun run;
  run.sampler = std::make_unique<Sampler>(
      so, [now] { return *now; }, opener);
  GPUSCOPE_RETURN_IF_ERROR(run.sampler->Open());
  for (double t = options.start_seconds; t <= options.end_seconds + 1e-9;
       t += options.step_seconds) {
    *now = t;
    (*set_time)(t);
    run.snapshot = run.sampler->SampleOnce(t == options.start_seconds);
    if (options.on_step) options.on_step(run.snapshot);
    if (options.on_step_window) options.on_step_window(run.snapshot, run.sampler->window());
  }
  return run;
}

}  // namespace gpuscope::collect
