// Options every gpuscope command accepts, and how they choose the NVML
// library:
//   --nvml-lib PATH       the library to dlopen (env GPUSCOPE_NVML_LIB;
//                         default libnvidia-ml.so.1, the driver's)
//   --simulate NAME|PATH  run on the simulator built next to the binary
//                         (<exe dir>/sim/libnvidia-ml.so.1, or installed as
//                         <exe dir>/../lib/gpuscope/sim/libnvidia-ml.so.1) with
//                         that scenario (exported as GPUSCOPE_SIM_SCENARIO)
//   --at DURATION         the scenario moment every command evaluates
//                         (cli/sim_clock.h; exported as GPUSCOPE_SIM_START_TIME)
// Precedence: --nvml-lib, then --simulate's simulator, then
// GPUSCOPE_NVML_LIB, then the default.
// Attribution (docs/attribution.md), for the commands that show whose work
// a GPU serves (the summary, top, health, diagnose):
//   --kubernetes                        ask the kubelet's pod-resources API
//   --pod-resources-kubelet-socket PATH its socket (default the kubelet's)
//   --hpc-job-mapping-dir DIR           Slurm job files per GPU
//   --proc-root DIR                     where /proc is (processes' cgroups)
//   --container-runtime-socket PATH     CRI socket naming each process's pod
//   --process-names                     process names name unheld GPUs' workload
// Thread safety: the pure functions are safe anywhere; PrepareNvml sets the
// process environment and must run before other threads start.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "attribution/service.h"
#include "gpuscope/snapshot.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct CommonOptions {
  std::string nvml_lib;  // --nvml-lib; empty when not given
  std::string simulate;  // --simulate; empty when not given
  // --at; unset: cli/sim_clock.h's default
  std::optional<double> at_seconds;
  attribution::ServiceOptions attribution;
};

// A copy of `snapshot` with Snapshot::attribution filled in by one refresh of
// the sources `options` turn on (Slurm cgroups always).
SnapshotPtr Attribute(const CommonOptions& options, const SnapshotPtr& snapshot);

// Removes the common options (`--opt VALUE` or `--opt=VALUE`, anywhere) from
// `args` and returns them.
Result<CommonOptions> ExtractCommonOptions(std::vector<std::string>* args);

// Where the simulator may lie, in search order, for a binary in `exe_dir`.
std::vector<std::string> SimulatorCandidates(const std::string& exe_dir);

// The directory of the running binary (from /proc/self/exe); "" if unknown.
std::string ExecutableDir();

using EnvLookup = std::function<const char*(const char*)>;
using FileExists = std::function<bool(const std::string&)>;

// The library path to dlopen (pure: environment and file system injected).
Result<std::string> ChooseNvmlLibrary(const CommonOptions& options, const EnvLookup& env,
                                      const std::string& exe_dir, const FileExists& exists);

// Applies the options to this process: with --simulate, checks the scenario
// exists (a path, or a name shipped beside the simulator; kNotFound listing
// the shipped ones) and exports GPUSCOPE_SIM_SCENARIO (paths made absolute),
// and the scenario moment (cli/sim_clock.h; `serve` passes its own default).
// Returns the library path to open.
enum class SimStart {
  kSettled,        // one-shot commands: --at, env, else the settled moment
  kScenarioStart,  // serve: --at, env, else the simulator's 0
};
Result<std::string> PrepareNvml(const CommonOptions& options, SimStart start);
Result<std::string> PrepareNvml(const CommonOptions& options);

// The scenario shown to users: --simulate's value or GPUSCOPE_SIM_SCENARIO,
// a path shortened to its file stem; "" when neither is set.
std::string ScenarioName(const CommonOptions& options, const EnvLookup& env);

}  // namespace gpuscope::cli
