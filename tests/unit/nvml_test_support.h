// Helpers shared by the nvml_*_test.cc files: open the simulator build of
// libnvidia-ml.so.1 with a scenario, set environment variables for one scope,
// write temporary scenario files.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <memory>
#include <optional>
#include <string>

#include "nvml/library.h"

namespace gpuscope::nvml::testing {

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

// Writes `text` to a file under the test temp dir and returns its path.
inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

// Opens the simulator on `scenario` (a built-in name or a file path).
inline Result<std::unique_ptr<Library>> OpenSim(const std::string& scenario) {
  ScopedEnv env("GPUSCOPE_SIM_SCENARIO", scenario);
  return Library::Open(SimLibraryPath());
}

}  // namespace gpuscope::nvml::testing
