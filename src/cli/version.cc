#include "cli/version.h"

#include <filesystem>
#include <ostream>

#include "cli/options.h"
#include "gpuscope/version.h"

namespace gpuscope::cli {
namespace {

const char* Flavour() {
#if defined(__SANITIZE_ADDRESS__)
  return "debug, AddressSanitizer + UndefinedBehaviorSanitizer";
#elif defined(NDEBUG)
  return "release";
#else
  return "debug";
#endif
}

}  // namespace

std::string VersionText(const std::string& exe_dir) {
  std::string text =
      "gpuscope " + std::string(Version()) + " (commit " + std::string(GitCommit()) + ")\n";
  text += "build: compiler " __VERSION__ ", C++" + std::to_string(__cplusplus / 100 % 100) + ", " +
          Flavour() + "\n";
  text += "nvml: loaded at run time with dlopen (default libnvidia-ml.so.1, no CUDA needed)\n";
  std::string simulator = "not found";
  for (const std::string& path : SimulatorCandidates(exe_dir)) {
    std::error_code ec;
    if (std::filesystem::exists(path, ec)) {
      simulator = std::filesystem::weakly_canonical(path, ec).string();
      break;
    }
  }
  text += "simulator: " + simulator + "\n";
  return text;
}

Status RunVersion(Invocation& inv) {
  if (inv.args.size() == 1 && (inv.args[0] == "-h" || inv.args[0] == "--help")) {
    *inv.out << "Usage: gpuscope version   (also gpuscope --version)\n"
                "Version and build information: gpuscope, its build, the modules and the\n"
                "simulator found beside the binary.\n";
    return Status::Ok();
  }
  if (!inv.args.empty() && inv.args[0].starts_with("-")) {
    return UnknownOption({inv.args[0], "", false, inv.args[0]}, "version");
  }
  if (!inv.args.empty()) {
    return Status::InvalidArgument("gpuscope version takes no arguments.");
  }
  *inv.out << VersionText(ExecutableDir());
  return Status::Ok();
}

}  // namespace gpuscope::cli
