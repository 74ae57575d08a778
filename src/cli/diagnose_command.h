// `gpuscope diagnose`: "why is my job slow?" Bottleneck verdicts with the
// evidence behind them, per GPU, over a trailing window:
//
//   gpuscope diagnose [--window 5m] [-i GPU] [--json] [--live]
//   gpuscope diagnose --agent URL [-i GPU] [--json] [TLS and basic-auth options]
//
// On the simulator (--simulate or GPUSCOPE_SIM_SCENARIO) the window is sampled
// offline: the scenario clock is stepped from GPUSCOPE_SIM_START_TIME (or 0)
// to start + window in 1 s steps, so five scenario minutes take under a
// second. On a real driver the GPUs are sampled live once a second for the
// window (progress on stderr; SIGINT/SIGTERM stops early and diagnoses what
// was gathered), then diagnosed. --live samples the simulator that way too,
// so tests run the real-time path on a sped-up scenario.
//
// --agent reads a running `gpuscope serve`'s /api/v1/diagnosis instead (its
// own window, re-diagnosed every 10 s), which also lists each GPU's
// application KPIs from the agent's OTLP receiver (docs/app-kpis.md): a
// one-shot command has no KPIs of its own. TLS, client certificates and basic
// auth as `gpuscope baseline` (libcurl, baseline/prom_client.h).
//
// Thread safety: runs on main's thread.
#pragma once

#include <string>
#include <vector>

#include "baseline/prom_client.h"
#include "cli/commands.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// The longest --window: a day, sampled live once a second or stepped on the
// simulator (about a minute of one core; progress on stderr). With --agent
// the window is the agent's own (5m).
inline constexpr double kMaxWindowSeconds = 24 * 3600;

struct DiagnoseArgs {
  double window_seconds = 300;
  std::string ids;  // -i/--id, nvidia-smi syntax; empty: every GPU
  bool json = false;
  bool live = false;  // sample in real time even on the simulator
  bool help = false;
  baseline::ClientOptions agent;  // --agent URL and its TLS/auth; url empty: sample here
  bool window_given = false;
};

// Parses the arguments after `diagnose` (common options already removed).
Result<DiagnoseArgs> ParseDiagnoseArgs(const std::vector<std::string>& args);

std::string DiagnoseUsage();

Status RunDiagnose(Invocation& inv);

}  // namespace gpuscope::cli
