// gpuscope: parses the command line, dispatches to the subcommand table
// (src/cli/commands.cc) and turns the command's Status into the exit code.
// Everything else lives in the core libraries.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using gpuscope::Result;
  using gpuscope::Status;
  namespace cli = gpuscope::cli;

  Result<cli::Invocation> inv =
      cli::ParseCommandLine(std::vector<std::string>(argv + 1, argv + argc));
  Status status = inv.status();
  if (inv.ok()) {
    inv->out = &std::cout;
    inv->err = &std::cerr;
    status = cli::FindCommand(inv->command)->run(*inv);
  }
  std::cout.flush();
  if (!status.ok()) {
    std::cerr << status.message() << std::endl;
    return cli::ExitCodeFor(status);
  }
  return inv->exit_code;
}
