// The frame of `gpuscope top`: a pure function of a Snapshot, the terminal
// width and display options to the text drawn on screen (no escape codes for
// clearing; colours only when asked). One block per GPU: utilization next to
// the GPM activity that says how much of the chip really works, memory, power,
// temperature against the slowdown threshold, SM clock against its maximum,
// the active clock event (throttle) reasons by name, PCIe rates, the state,
// and an optional bottleneck verdict; then the processes.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gpuscope/snapshot.h"

namespace gpuscope::cli {

struct FrameOptions {
  int width = 100;    // terminal columns
  bool color = true;  // ANSI colours (LOST/STALE in red, throttling in yellow)
  bool simulated = false;
  std::string scenario;               // shown in the header when simulated
  std::string subtitle;               // e.g. "every 1s, Ctrl-C quits"; "" for none
  std::vector<std::string> verdicts;  // per Snapshot::gpus slot; "" or missing: no line
};

std::string RenderFrame(const Snapshot& snapshot, const FrameOptions& options);

// "[#####.....]" of `width` cells (brackets included) filled to percent.
std::string Bar(double percent, int width);

// The active clock event reasons of a kClockReasons bit mask, by readable
// name ("SW power cap", "HW thermal"), comma separated; "none" when none.
std::string ThrottleNames(uint64_t bits);

// Terminal columns of `fd` (TIOCGWINSZ), or 100 when it is not a terminal.
int TerminalWidth(int fd);

}  // namespace gpuscope::cli
