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

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gpuscope/snapshot.h"

namespace gpuscope::cli {

struct FrameOptions {
  int width = 100;  // terminal columns
  // Terminal rows. 0: the full frame (--once): one block per GPU, every
  // process. Otherwise the live screen, which never exceeds width x height:
  // one row per GPU (and MIG instance), the `selected` GPU's block below
  // them, then its processes as far as they fit.
  int height = 0;
  std::size_t selected = 0;  // index among the whole GPUs (MIG instances skipped)
  bool color = true;         // ANSI colours (LOST/STALE in red, throttling in yellow)
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
// Terminal rows of `fd`, or 24 when it is not a terminal.
int TerminalHeight(int fd);

// The number of whole GPUs (rows the selection moves over).
std::size_t WholeGpuCount(const Snapshot& snapshot);

// `line` cut to `width` visible columns: escape sequences count for nothing,
// a UTF-8 character for one; colours are reset when cut.
std::string ClipVisible(const std::string& line, int width);

}  // namespace gpuscope::cli
