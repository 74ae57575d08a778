#include "lifecycle.h"

#include <dlfcn.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <limits>
#include <memory>
#include <mutex>

#include "control.h"
#include "events.h"
#include "sim.h"

namespace gpuscope::sim {
namespace {

struct Lifecycle {
  std::mutex mu;
  int refcount = 0;
  std::shared_ptr<Sim> sim;
  std::unique_ptr<ControlChannel> control;
  std::string last_error;
  double pending_time = std::numeric_limits<double>::quiet_NaN();
};

Lifecycle& L() {
  static Lifecycle* l = new Lifecycle;  // never destroyed: calls may race exit
  return *l;
}

const char* Env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

std::string LibraryDir() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&LibraryDir), &info) == 0 || !info.dli_fname) return ".";
  return std::filesystem::path(info.dli_fname).parent_path().string();
}

// A path, or the name of a shipped scenario beside the library.
std::string ScenarioPath() {
  const char* v = Env("GPUSCOPE_SIM_SCENARIO");
  std::string name = v ? v : "training-8xh100";
  bool is_path =
      name.find('/') != std::string::npos || name.ends_with(".yaml") || name.ends_with(".yml");
  if (is_path) return name;
  return LibraryDir() + "/scenarios/" + name + ".yaml";
}

bool EnvDouble(const char* name, double* out, std::string* error) {
  const char* v = Env(name);
  if (!v) return true;
  char* end = nullptr;
  double d = std::strtod(v, &end);
  if (*end != '\0' || !std::isfinite(d) || d < 0) {
    *error = std::string(name) + ": bad value '" + v + "'";
    return false;
  }
  *out = d;
  return true;
}

nvmlReturn_t Fail(nvmlReturn_t code, const std::string& message) {
  L().last_error = message;  // read through gpuscopeSimLastError()
  return code;
}

// Builds the Sim for a first init; lock held.
nvmlReturn_t Start(unsigned flags) {
  auto scenario = LoadScenarioFile(ScenarioPath());
  if (!scenario.ok()) {
    // NVML's codes for what the caller gave: no such file, or one that is wrong
    // (the agent then exits as for any bad argument, not as for a bug).
    const bool missing = scenario.status().code() == Status::Code::kNotFound;
    return Fail(missing ? 6 /* NOT_FOUND */ : 2 /* INVALID_ARGUMENT */,
                scenario.status().message());
  }
  TimeOptions time;
  time.time_scale = scenario->time_scale;
  double frozen = std::numeric_limits<double>::quiet_NaN();
  std::string error;
  if (!EnvDouble("GPUSCOPE_SIM_TIME_SCALE", &time.time_scale, &error) ||
      !EnvDouble("GPUSCOPE_SIM_START_TIME", &time.start_offset, &error) ||
      !EnvDouble("GPUSCOPE_SIM_FROZEN_TIME", &frozen, &error)) {
    return Fail(999, error);
  }
  if (!std::isnan(L().pending_time)) frozen = L().pending_time;
  L().pending_time = std::numeric_limits<double>::quiet_NaN();
  if (!std::isnan(frozen)) time.frozen = frozen;
  if (scenario->gpus.empty() && !(flags & 1)) {
    return Fail(28, scenario->source + ": no GPUs (use NVML_INIT_FLAG_NO_GPUS)");
  }
  L().sim = std::make_shared<Sim>(std::move(*scenario), time);
  if (const char* control = Env("GPUSCOPE_SIM_CONTROL")) {
    L().control = std::make_unique<ControlChannel>(control, L().sim.get());
  }
  ResetCallCounts();
  return 0;
}

}  // namespace

int ParseReturnName(const std::string& text) {
  std::string name = text;
  if (name.rfind("NVML_ERROR_", 0) == 0) name = name.substr(11);
  if (name == "UNKNOWN") return 999;
  for (int code = 0; code <= 30; ++code) {
    std::string full = nvml::ReturnName(code);
    if (full == text || full == "NVML_ERROR_" + name || (code == 0 && name == "SUCCESS")) {
      return code;
    }
  }
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  return !text.empty() && *end == '\0' ? static_cast<int>(v) : -1;
}

nvmlReturn_t Init(unsigned flags) {
  std::lock_guard lock(L().mu);
  if (const char* forced = Env("GPUSCOPE_SIM_INIT_ERROR")) {
    int code = ParseReturnName(forced);
    if (code < 0) code = 999;
    if (code != 0) {
      return Fail(code, std::string("GPUSCOPE_SIM_INIT_ERROR=") + forced);
    }
  }
  if (L().refcount == 0) {
    L().last_error.clear();
    if (nvmlReturn_t rc = Start(flags)) return rc;
  }
  ++L().refcount;
  return 0;
}

nvmlReturn_t Shutdown() {
  std::unique_ptr<ControlChannel> control;
  std::shared_ptr<Sim> sim;
  {
    std::lock_guard lock(L().mu);
    if (L().refcount == 0) return 1;  // UNINITIALIZED
    if (--L().refcount > 0) return 0;
    control = std::move(L().control);
    sim = std::move(L().sim);
  }
  control.reset();  // joins the thread before the Sim can go
  events::Wake();   // waits in progress see the simulator gone
  return 0;
}

const char* LastError() {
  std::lock_guard lock(L().mu);
  return L().last_error.c_str();
}

void SetTime(double t) {
  std::shared_ptr<Sim> sim = CurrentSim();
  if (sim) {
    sim->Freeze(t);
  } else {
    std::lock_guard lock(L().mu);
    L().pending_time = t;
  }
}

double GetTime() {
  std::shared_ptr<Sim> sim = CurrentSim();
  return sim ? sim->Now() : 0.0;
}

std::shared_ptr<Sim> CurrentSim() {
  std::lock_guard lock(L().mu);
  return L().sim;
}

}  // namespace gpuscope::sim
