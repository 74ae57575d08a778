#include "cli/sim_clock.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "cli/options.h"
#include "nvml/library.h"

namespace gpuscope::cli {
namespace {

constexpr const char* kEnvStart = "GPUSCOPE_SIM_START_TIME";
constexpr const char* kEnvFrozen = "GPUSCOPE_SIM_FROZEN_TIME";

const char* Env(const char* name) { return std::getenv(name); }

bool IsSet(const char* name) {
  const char* value = Env(name);
  return value != nullptr && *value != '\0';
}

// The simulator's last planned change; nullopt when it cannot tell (its init
// fails, or the library is not a simulator that exports it).
std::optional<double> LastChange(const std::string& library) {
  Result<std::unique_ptr<nvml::Library>> lib = nvml::Library::Open(library);
  if (!lib.ok()) return std::nullopt;
  using LastChangeFn = double (*)();
  auto last_change = reinterpret_cast<LastChangeFn>((*lib)->FindSymbol("gpuscopeSimLastChange"));
  if (last_change == nullptr) return std::nullopt;
  return last_change();
}

// The value this process exported last, so that a second command in one
// process (the unit tests) is not mistaken for a user's setting.
std::string& Exported() {
  static std::string value;
  return value;
}

void Export(double seconds) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", seconds);
  ::setenv(kEnvStart, text, 1);
  Exported() = text;
}

bool UserSetStart() { return IsSet(kEnvStart) && Env(kEnvStart) != Exported(); }

}  // namespace

Result<double> ParseAt(std::string_view text) {
  if (text == "0" || text == "0s") return 0.0;
  Result<double> seconds = ParseCommandDuration(text);
  if (!seconds.ok()) return Status::InvalidArgument("--at: " + seconds.status().message());
  return *seconds;
}

double SettledMoment(double last_change) { return last_change + kSettleSeconds; }

Status ExportSimMoment(const CommonOptions& options, const std::string& library, SimStart start) {
  const bool scenario = !options.simulate.empty() || IsSet("GPUSCOPE_SIM_SCENARIO");
  if (options.at_seconds) {
    if (!scenario) {
      return Status::InvalidArgument(
          "--at picks a moment of a simulator scenario: use it with --simulate NAME|PATH.");
    }
    Export(*options.at_seconds);
    return Status::Ok();
  }
  // The variables a user or test set win; a frozen clock ignores the start.
  if (UserSetStart()) return Status::Ok();
  if (IsSet(kEnvStart)) ::unsetenv(kEnvStart);  // ours, from an earlier command
  if (options.simulate.empty() || start != SimStart::kSettled || IsSet(kEnvFrozen)) {
    return Status::Ok();
  }
  if (std::optional<double> last = LastChange(library)) Export(SettledMoment(*last));
  return Status::Ok();
}

Result<double> SimMoment() { return ParseSimStartTime(Env(kEnvStart)); }

Result<double> ParseSimStartTime(const char* value) {
  if (value == nullptr || *value == '\0') return 0.0;
  char* end = nullptr;
  const double t = std::strtod(value, &end);
  if (*end != '\0' || !std::isfinite(t) || t < 0) {
    return Status::InvalidArgument(std::string(kEnvStart) + ": expected seconds >= 0, got '" +
                                   value + "'");
  }
  return t;
}

std::string DescribeMoment(double seconds) {
  const long total = std::lround(seconds);
  char text[48];
  if (total >= 60) {
    std::snprintf(text, sizeof(text), "%ldm%02lds", total / 60, total % 60);
  } else {
    std::snprintf(text, sizeof(text), "%lds", total);
  }
  return text;
}

}  // namespace gpuscope::cli
