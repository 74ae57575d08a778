// What every unit test that runs the simulator build of libnvidia-ml.so.1
// needs: its path, environment variables set for one scope (the simulator
// reads GPUSCOPE_SIM_* at init), unique temp files for scenarios, and the
// simulator's control file. Area headers (sim_test_support.h,
// nvml_test_support.h, collect_test_support.h) build on it.
//
// Thread safety: none; the environment is process-wide, so tests using these
// run one at a time (as GoogleTest does).
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "test_paths.h"

namespace gpuscope::test_support {

inline std::string SimLibraryPath() { return test_support::BinaryDir() + "/sim/libnvidia-ml.so.1"; }

// Sets an environment variable for the lifetime of the object, then restores
// its previous value (or unsets it).
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

// A fresh file path under the test temp dir, unique per process and call,
// ending in `name`.
inline std::string TempPath(const std::string& name) {
  static int counter = 0;
  return ::testing::TempDir() + "/gpuscope-" + std::to_string(getpid()) + "-" +
         std::to_string(++counter) + "-" + name;
}

// Writes `text` to a fresh TempPath(name) and returns its path.
inline std::string WriteTempFile(const std::string& name, const std::string& text) {
  const std::string path = TempPath(name);
  std::ofstream(path, std::ios::trunc) << text;
  return path;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The simulator's control file, named by GPUSCOPE_SIM_CONTROL while the
// object lives: commands are appended, the sim polls it and acknowledges
// them in <path>.ack (sim/README.md). The sim must be running (initialised
// after this object was made) when a command is sent.
class SimControl {
 public:
  SimControl() : path_(TempPath("control")), env_("GPUSCOPE_SIM_CONTROL", path_) {
    // A fresh control file, and no acknowledgement left by an earlier process
    // that had the same pid: a stale one would make Send return at once.
    std::ofstream(path_, std::ios::trunc).flush();
    std::filesystem::remove(path_ + ".ack");
  }
  ~SimControl() {
    std::filesystem::remove(path_);
    std::filesystem::remove(path_ + ".ack");
  }
  SimControl(const SimControl&) = delete;
  SimControl& operator=(const SimControl&) = delete;
  const std::string& path() const { return path_; }

  // Appends a command and returns once the sim has applied it (a test
  // failure if it has not within 30 s, however loaded the machine).
  void Send(const std::string& command) {
    std::ofstream(path_, std::ios::app) << command << "\n";
    const auto size = static_cast<long long>(std::filesystem::file_size(path_));
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (Acked() < size) {
      if (std::chrono::steady_clock::now() > deadline) {
        ADD_FAILURE() << "the simulator did not apply '" << command << "' within 30 s";
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  // Writes the sim's call statistics (JSON) and returns them.
  std::string Stats() {
    const std::string out = TempPath("stats.json");
    Send("stats " + out);  // written before the ack
    return ReadFile(out);
  }

 private:
  // The control file offset up to which the sim has applied every line.
  long long Acked() const {
    std::ifstream in(path_ + ".ack");
    long long applied = -1;
    in >> applied;
    return applied;
  }

  std::string path_;
  ScopedEnv env_;
};

}  // namespace gpuscope::test_support
