// The subcommand table of the gpuscope binary: one explicit row per command
// (no self-registration). main() parses the command line into an Invocation,
// looks the command up here, runs it and turns its Status into the exit code.
//
// Adding a command: declare `Status RunX(Invocation&)` in its own header in
// src/cli, include it in commands.cc and add one row to kCommands there.
// Thread safety: the table is immutable; a command runs on main's thread.
#pragma once

#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cli/common_options.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct Invocation {
  std::string command;                // the table row's name; "" for the default table
  CommonOptions common;               // --nvml-lib, --simulate
  std::vector<std::string> args;      // after the command name, common options removed
  std::vector<std::string> all_args;  // after the command name, common options kept
  std::ostream* out = nullptr;        // stdout
  std::ostream* err = nullptr;        // stderr (warnings; errors go back as Status)
  int exit_code = 0;                  // a command may set a non-zero code for a non-error outcome
};

using CommandFn = Status (*)(Invocation&);

struct Command {
  std::string_view name;     // "query"; "" is the default (no command given)
  std::string_view summary;  // one line for `gpuscope --help`
  CommandFn run;
};

// Every command, in help order.
std::span<const Command> Commands();
const Command* FindCommand(std::string_view name);

// Splits argv (without the program name) into command and arguments.
// nvidia-smi habits are accepted: `gpuscope --query-gpu=...` runs query.
// `-h`/`--help` alone runs help, `--version` runs version.
Result<Invocation> ParseCommandLine(const std::vector<std::string>& argv);

// Exit status for a command's Status: the one table of src/cli/exit_codes.h
// (nvidia-smi's codes where it has one). 0 for Ok.
int ExitCodeFor(const Status& status);

// `gpuscope --help` text, listing the table.
std::string Usage();

}  // namespace gpuscope::cli
