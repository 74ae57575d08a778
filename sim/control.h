// Control channel: a background thread polls a text file (every ~20 ms) and
// applies each complete line appended after it started: fault injection and
// clearing, time freezing, call statistics. Commands are in sim/README.md.
//
// Thread safety: the channel owns its thread; construct and destroy it from
// one thread. The Sim must outlive the channel.
#pragma once

#include <atomic>
#include <string>
#include <thread>

#include "gpuscope/status.h"
#include "sim.h"

namespace gpuscope::sim {

// Applies one command line to sim. Empty lines and '#' comments are no-ops.
Status ApplyControlCommand(Sim& sim, const std::string& line);

class ControlChannel {
 public:
  ControlChannel(std::string path, Sim* sim);
  ~ControlChannel();
  ControlChannel(const ControlChannel&) = delete;
  ControlChannel& operator=(const ControlChannel&) = delete;

 private:
  void Run();
  void Poll();

  std::string path_;
  Sim* sim_;
  long long offset_ = 0;
  std::string partial_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace gpuscope::sim
