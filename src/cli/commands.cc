#include "cli/commands.h"

#include <algorithm>
#include <ostream>

#include "cli/agent_source.h"
#include "cli/baseline_command.h"
#include "cli/diagnose_command.h"
#include "cli/docs_command.h"
#include "cli/exit_codes.h"
#include "cli/health_command.h"
#include "cli/list_command.h"
#include "cli/options.h"
#include "cli/query_command.h"
#include "cli/report_command.h"
#include "cli/run_command.h"
#include "cli/serve.h"
#include "cli/sim_clock.h"
#include "cli/summary.h"
#include "cli/top.h"
#include "cli/version.h"

namespace gpuscope::cli {
namespace {

// `gpuscope help` lists the commands; `gpuscope help query` is `query --help`.
Status RunHelp(Invocation& inv) {
  if (inv.args.empty()) {
    *inv.out << Usage();
    return Status::Ok();
  }
  const std::string name = inv.args.front();
  const Command* command = name.empty() || name == "help" ? nullptr : FindCommand(name);
  if (command == nullptr || inv.args.size() > 1) {
    return Status::InvalidArgument("gpuscope help takes one command name, got \"" +
                                   (command == nullptr ? name : inv.args[1]) +
                                   "\"; run gpuscope --help for the commands.");
  }
  inv.command = name;
  inv.args = {"--help"};
  inv.all_args = {"--help"};
  return command->run(inv);
}

// One row per subcommand. Add new commands here (and include their header).
// clang-format off
constexpr Command kCommands[] = {
  {"",        "Summary table of every GPU (like nvidia-smi without arguments).", RunSummary},
  {"query",   "nvidia-smi compatible CSV: --query-gpu=... --format=csv [-l N].", RunQuery},
  {"list",    "GPUs and MIG devices with their UUIDs (-L, as nvidia-smi -L).", RunList},
  {"serve",   "Prometheus exporter on :9400 (dcgm-exporter compatible).",     RunServe},
  {"health",   "Health checks: XID, ECC, remapped rows, PCIe, NVLink.",       RunHealth},
  {"diagnose", "Why is my job slow? Bottleneck verdicts with evidence.",     RunDiagnose},
  {"top",      "Live per-GPU and per-process view.",                          RunTop},
  {"baseline", "Per-workload baselines from Prometheus; `baseline rules`.",  RunBaseline},
  {"report",  "What a job used and wasted: report job|pod|workload|tenants.", RunReport},
  {"run",     "Run a command; at its exit, report its GPU use: run -- CMD ARGS.", RunRun},
  {"docs",    "Generated reference: docs metrics|configuration (Markdown).",  RunDocs},
  {"version", "Version and build information.",                                 RunVersion},
  {"help",    "This list; `help COMMAND` shows that command's --help.",        RunHelp},
};
// clang-format on

bool IsQueryFlag(std::string_view arg) {
  return arg.starts_with("--query-") || arg.starts_with("--help-query-");
}

// --agent and its TLS/auth options (cli/agent_source.h), as --flag or --flag=value.
bool IsAgentFlag(std::string_view arg) {
  const std::string_view flag = arg.substr(0, arg.find('='));
  return std::find(kAgentValueFlags.begin(), kAgentValueFlags.end(), flag) !=
         kAgentValueFlags.end();
}

}  // namespace

std::span<const Command> Commands() { return kCommands; }

const Command* FindCommand(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

Result<Invocation> ParseCommandLine(const std::vector<std::string>& argv) {
  Invocation inv;
  inv.args = argv;
  Result<CommonOptions> common = ExtractCommonOptions(&inv.args);
  if (!common.ok()) return common.status();
  inv.common = *common;
  inv.all_args = argv;
  if (!inv.args.empty()) {
    const std::string first = inv.args.front();
    bool is_word = !first.starts_with("-");
    if (first == "-h" || first == "--help") {
      inv.command = "help";
    } else if (first == "--version") {
      inv.command = "version";
    } else if (first == "-L" || first == "--list-gpus") {
      inv.command = "list";  // nvidia-smi -L
    } else if (IsAgentFlag(first)) {
      inv.command = "";  // `gpuscope --agent URL`: the summary of an agent
    } else if (IsQueryFlag(first)) {
      inv.command = "query";  // nvidia-smi style: every argument is query's
    } else if (is_word) {
      inv.command = first;
    } else {
      return Status::InvalidArgument(UnknownOptionMessage(first, "", FlagsInHelp(Usage())));
    }
    if (is_word || (inv.command != "query" && !inv.command.empty())) {
      inv.args.erase(inv.args.begin());
      // The first argument left by ExtractCommonOptions is the first one in
      // argv that is neither a common option nor its value.
      auto at = std::find(inv.all_args.begin(), inv.all_args.end(), first);
      if (at != inv.all_args.end()) inv.all_args.erase(at);
    }
  }
  if (FindCommand(inv.command) == nullptr) {
    std::vector<std::string> names;
    for (const Command& command : kCommands) names.emplace_back(command.name);
    const std::string near = NearMiss(inv.command, names);
    return Status::InvalidArgument("Unknown command \"" + inv.command + "\"" +
                                   (near.empty() ? "." : "; did you mean " + near + "?") +
                                   " See gpuscope --help.");
  }
  return inv;
}

int ExitCodeFor(const Status& status) { return static_cast<int>(ExitFor(status)); }

std::string Usage() {
  std::string text =
      "Usage: gpuscope [COMMAND] [OPTIONS]\n"
      "GPU observability for NVIDIA GPUs, through NVML.\n\nCommands:\n";
  for (const Command& command : kCommands) {
    std::string name = command.name.empty() ? "(none)" : std::string(command.name);
    name.resize(10, ' ');
    text += "  " + name + std::string(command.summary) + "\n";
  }
  text +=
      "\nOptions of every command:\n"
      "  --nvml-lib PATH       NVML library to load (env GPUSCOPE_NVML_LIB; default "
      "libnvidia-ml.so.1)\n"
      "  --simulate NAME|PATH  run on the NVML simulator with this scenario\n"
      "  --at DURATION         the scenario moment on the simulator (see below)\n"
      "\nRead commands (the summary, query, -L, top, health, diagnose, report) also take\n"
      "  --agent URL           read a running `gpuscope serve` (http(s)://host:9400) instead\n"
      "                        of NVML here: the same output (docs/cli.md, remote parity)\n"
      "  --ca-file, --cert-file, --key-file, --basic-auth-user,\n"
      "  --basic-auth-password-file  TLS and basic auth towards the agent\n";
  return text + kSimMomentHelp + ExitCodeHelp();
}

}  // namespace gpuscope::cli
