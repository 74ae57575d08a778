// One clock for the simulator: every command evaluates a scenario at the same
// moment, so `health`, `diagnose`, `query`, `top` and the summary tell one
// story (on mixed-node, GPU 6 is equally hot in all of them; on fault-drill,
// GPU 3 is lost in all of them). The moment is, in order:
//   --at DURATION               (a common option: 0, 90s, 5m, 1h30m)
//   GPUSCOPE_SIM_START_TIME     (scenario seconds, the simulator's own variable)
//   the scenario's last planned change (gpuscopeSimLastChange) + kSettleSeconds,
//   with --simulate; plain GPUSCOPE_SIM_SCENARIO keeps the simulator's 0.
// The moment reaches the simulator as GPUSCOPE_SIM_START_TIME, its time at
// nvmlInit. One-shot commands read it there; live ones (top, query -l,
// health --watch) run on from it; `diagnose` ends its window at it; `serve`
// plays the scenario from 0 unless told (fire drills happen as you watch).
//
// Thread safety: ExportSimMoment sets the process environment and must run
// before other threads start; the rest are pure.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "cli/common_options.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

// The paragraph every simulator-reading command's --help ends with.
inline constexpr const char* kSimMomentHelp =
    "\nOn the simulator (--simulate NAME|PATH) every command evaluates the scenario at one\n"
    "moment: --at DURATION (0, 90s, 5m; or env GPUSCOPE_SIM_START_TIME in seconds), by\n"
    "default 5m after the scenario's last planned change (a workload phase or a fault).\n";

// A whole default diagnose window after the last change: diagnose's default
// window then sees only the settled scenario, and 300 s is twelve thermal
// time constants of the simulated boards (25 s).
inline constexpr double kSettleSeconds = 300;

// --at's text: "0", or a duration as other commands take it ("90", "90s",
// "5m", "1h30m"). Errors name --at and the text.
Result<double> ParseAt(std::string_view text);

// The default moment of a scenario whose last change is at `last_change`.
double SettledMoment(double last_change);

// Exports GPUSCOPE_SIM_START_TIME for the command about to open `library`
// (see the header comment). The settled default asks the simulator itself
// (one extra nvmlInit of the scenario); when that init fails, nothing is
// exported and the command reports the failure as usual. --at without a
// scenario is an InvalidArgument.
Status ExportSimMoment(const CommonOptions& options, const std::string& library, SimStart start);

// A GPUSCOPE_SIM_START_TIME value: seconds >= 0; 0 when null or empty. An
// error names the variable and its text.
Result<double> ParseSimStartTime(const char* value);

// The moment exported (GPUSCOPE_SIM_START_TIME, as ParseSimStartTime reads it).
Result<double> SimMoment();

// "5m05s", "42s": a moment for headers.
std::string DescribeMoment(double seconds);

}  // namespace gpuscope::cli
