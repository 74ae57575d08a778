// Helpers shared by the collect_*_test.cc files: the simulator build of
// libnvidia-ml.so.1, scoped environment variables, temp files, the sim's
// control channel and its scenario clock.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "collect/sampler.h"
#include "nvml/library.h"

namespace gpuscope::collect::testing {

inline std::string SimLibraryPath() { return GPUSCOPE_BINARY_DIR "/sim/libnvidia-ml.so.1"; }

// Sets an environment variable for the lifetime of the object.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    setenv(name, value.c_str(), 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// A fresh file path under the test temp dir (unique per process and call).
inline std::string TempPath(const std::string& name) {
  static int counter = 0;
  return ::testing::TempDir() + "/collect-" + std::to_string(getpid()) + "-" +
         std::to_string(++counter) + "-" + name;
}

inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path) << text;
  return path;
}

// Options for a sampler on the simulator.
inline SamplerOptions SimOptions() {
  SamplerOptions options;
  options.nvml_path = SimLibraryPath();
  return options;
}

// A clock tests move by hand.
struct ManualClock {
  double now = 1'700'000'000.0;
  Clock AsClock() {
    return [this] { return now; };
  }
};

// The simulator's control file: commands are appended, the sim polls it.
class SimControl {
 public:
  SimControl() : path_(TempPath("control")), env_("GPUSCOPE_SIM_CONTROL", path_) {
    std::ofstream(path_).flush();
  }
  void Send(const std::string& command) {
    std::ofstream(path_, std::ios::app) << command << "\n";
    // The sim polls every ~20 ms.
    std::this_thread::sleep_for(std::chrono::milliseconds(120));
  }
  // Writes the sim's call statistics (JSON) and returns them.
  std::string Stats() {
    const std::string out = TempPath("stats.json");
    Send("stats " + out);
    for (int i = 0; i < 100 && !std::filesystem::exists(out); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ifstream in(out);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  std::string path_;
  ScopedEnv env_;
};

// Sets the simulator's scenario time through its exported hook.
inline void SetSimTime(const Sampler& sampler, double seconds) {
  auto library = sampler.library();
  ASSERT_NE(library, nullptr);
  auto set = reinterpret_cast<void (*)(double)>(library->FindSymbol("gpuscopeSimSetTime"));
  ASSERT_NE(set, nullptr);
  set(seconds);
}

}  // namespace gpuscope::collect::testing
