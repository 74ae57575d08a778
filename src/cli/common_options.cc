#include "cli/common_options.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string_view>

#include "cli/sim_clock.h"
#include "gpuscope/attribution.h"

namespace gpuscope::cli {
namespace {

constexpr const char* kDefaultNvmlLibrary = "libnvidia-ml.so.1";
constexpr const char* kEnvNvmlLib = "GPUSCOPE_NVML_LIB";
constexpr const char* kEnvScenario = "GPUSCOPE_SIM_SCENARIO";

// A --simulate value naming a file rather than a shipped scenario.
bool IsPath(std::string_view value) {
  return value.find('/') != std::string_view::npos || value.ends_with(".yaml") ||
         value.ends_with(".yml");
}

}  // namespace

Result<CommonOptions> ExtractCommonOptions(std::vector<std::string>* args) {
  CommonOptions options;
  struct Spec {
    std::string_view flag;
    std::string* target;
  };
  attribution::ServiceOptions& a = options.attribution;
  std::string at;
  const Spec specs[] = {{"--nvml-lib", &options.nvml_lib},
                        {"--at", &at},
                        {"--simulate", &options.simulate},
                        {"--pod-resources-kubelet-socket", &a.kubelet.socket},
                        {"--hpc-job-mapping-dir", &a.hpc_job_dir},
                        {"--proc-root", &a.proc_root},
                        {"--container-runtime-socket", &a.cri.socket}};
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args->size(); ++i) {
    std::string_view arg = (*args)[i];
    if (arg == "--") {  // the rest is another program's (`gpuscope run -- CMD`)
      rest.insert(rest.end(), args->begin() + static_cast<std::ptrdiff_t>(i), args->end());
      break;
    }
    if (arg == "--kubernetes") {
      a.kubernetes = true;
      continue;
    }
    if (arg == "--process-names") {
      a.process_names = true;
      continue;
    }
    const Spec* hit = nullptr;
    for (const Spec& spec : specs) {
      if (arg == spec.flag || (arg.starts_with(spec.flag) && arg[spec.flag.size()] == '=')) {
        hit = &spec;
      }
    }
    if (hit == nullptr) {
      rest.emplace_back(arg);
      continue;
    }
    if (arg.size() > hit->flag.size()) {
      *hit->target = arg.substr(hit->flag.size() + 1);
    } else if (i + 1 < args->size()) {
      *hit->target = (*args)[++i];
    } else {
      return Status::InvalidArgument("Option " + std::string(hit->flag) +
                                     " needs a value; see gpuscope --help.");
    }
    if (hit->target->empty()) {
      return Status::InvalidArgument("Option " + std::string(hit->flag) +
                                     " needs a value; see gpuscope --help.");
    }
  }
  *args = std::move(rest);
  if (!at.empty()) {
    Result<double> seconds = ParseAt(at);
    if (!seconds.ok()) return seconds.status();
    options.at_seconds = *seconds;
  }
  return options;
}

SnapshotPtr Attribute(const CommonOptions& options, const SnapshotPtr& snapshot) {
  auto out = std::make_shared<Snapshot>(*snapshot);
  out->attribution = std::make_shared<const Attribution>(attribution::Collect(
      options.attribution, snapshot->gpus, attribution::ProcessesOf(*snapshot)));
  return out;
}

std::vector<std::string> SimulatorCandidates(const std::string& exe_dir) {
  return {exe_dir + "/sim/libnvidia-ml.so.1", exe_dir + "/../lib/gpuscope/sim/libnvidia-ml.so.1"};
}

std::string ExecutableDir() {
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

Result<std::string> ChooseNvmlLibrary(const CommonOptions& options, const EnvLookup& env,
                                      const std::string& exe_dir, const FileExists& exists) {
  if (!options.nvml_lib.empty()) return options.nvml_lib;
  if (!options.simulate.empty()) {
    std::vector<std::string> candidates = SimulatorCandidates(exe_dir);
    for (const std::string& path : candidates) {
      if (exists(path)) return path;
    }
    return Status::NotFound("The simulator library was not found (looked for " + candidates[0] +
                            " and " + candidates[1] + "); build it or pass --nvml-lib PATH.");
  }
  const char* from_env = env(kEnvNvmlLib);
  if (from_env != nullptr && *from_env != '\0') return std::string(from_env);
  return std::string(kDefaultNvmlLibrary);
}

namespace {

std::vector<std::string> ShippedScenarios(const std::string& folder) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(folder, ec)) {
    if (entry.path().extension() == ".yaml") names.push_back(entry.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

Status CheckScenario(const std::string& scenario, const std::string& library) {
  std::error_code ec;
  if (IsPath(scenario)) {
    if (std::filesystem::is_regular_file(scenario, ec)) return Status::Ok();
    return Status::NotFound("Scenario file " + scenario + " does not exist.");
  }
  // A name is a file beside the simulator (sim/lifecycle.cc looks it up there).
  const std::string folder = std::filesystem::path(library).parent_path().string() + "/scenarios";
  if (!std::filesystem::is_directory(folder, ec)) return Status::Ok();  // not the simulator's
  if (std::filesystem::is_regular_file(folder + "/" + scenario + ".yaml", ec)) return Status::Ok();
  std::string shipped;
  for (const std::string& name : ShippedScenarios(folder)) {
    shipped += (shipped.empty() ? "" : ", ") + name;
  }
  return Status::NotFound("No scenario \"" + scenario + "\" is shipped (in " + folder +
                          "); the shipped ones: " + shipped + ". Or give a path to a .yaml file.");
}

}  // namespace

Result<std::string> PrepareNvml(const CommonOptions& options) {
  return PrepareNvml(options, SimStart::kSettled);
}

Result<std::string> PrepareNvml(const CommonOptions& options, SimStart start) {
  Result<std::string> library = ChooseNvmlLibrary(
      options, [](const char* name) { return std::getenv(name); }, ExecutableDir(),
      [](const std::string& path) {
        std::error_code ec;
        return std::filesystem::exists(path, ec);
      });
  if (!library.ok()) return library;
  // Checked here, before any command opens NVML: a missing scenario is the
  // same error with the same exit code everywhere (serve would retry it).
  if (!options.simulate.empty()) {
    GPUSCOPE_RETURN_IF_ERROR(CheckScenario(options.simulate, *library));
    std::string scenario = options.simulate;
    if (IsPath(scenario)) {
      std::error_code ec;
      scenario = std::filesystem::absolute(scenario, ec).string();
    }
    ::setenv(kEnvScenario, scenario.c_str(), 1);
  } else if (const char* from_env = std::getenv(kEnvScenario);
             from_env != nullptr && *from_env != '\0') {
    // GPUSCOPE_SIM_SCENARIO with the simulator's library: the same check.
    GPUSCOPE_RETURN_IF_ERROR(CheckScenario(from_env, *library));
  }
  GPUSCOPE_RETURN_IF_ERROR(ExportSimMoment(options, *library, start));
  return library;
}

std::string ScenarioName(const CommonOptions& options, const EnvLookup& env) {
  std::string value = options.simulate;
  if (value.empty()) {
    const char* from_env = env(kEnvScenario);
    value = from_env != nullptr ? from_env : "";
  }
  if (IsPath(value)) return std::filesystem::path(value).stem().string();
  return value;
}

}  // namespace gpuscope::cli
