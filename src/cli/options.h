// Walks a subcommand's arguments: "--flag=value", "--flag value" and
// "-f value" for flags that take a value, bare switches otherwise, with the
// same error sentences for every command; and the values they share.
// Thread safety: pure functions.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "baseline/prom_client.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct Option {
  std::string flag;           // "--window", without an inline "=value"
  std::string value;          // the value of a value-taking flag, or an inline one
  bool inline_value = false;  // given as --flag=value
  std::string raw;            // the argument as typed, for messages
};

using OptionHandler = std::function<Status(const Option&)>;

// Calls `handle` for each option of `args` in order; flags listed in
// `value_flags` consume the next argument unless given as --flag=value.
// The first error (a missing value, or the handler's) stops the walk.
Status ForEachOption(const std::vector<std::string>& args, std::string_view command,
                     std::initializer_list<std::string_view> value_flags,
                     const OptionHandler& handle);

// The options of a command that reads an HTTP server (baseline's Prometheus,
// diagnose's agent): --ca-file, --cert-file, --key-file, --basic-auth-user,
// --basic-auth-password-file, all taking a value. Stores `option` in `client`
// and returns true when it is one of them.
bool TakeClientOption(const Option& option, baseline::ClientOptions& client);

// The entry of `known` within a typo or two of `typed` ("" when none is).
std::string NearMiss(std::string_view typed, const std::vector<std::string>& known);

// The one message for an unknown option, in every command:
//   Unknown option "--adress" for gpuscope serve; did you mean --address?
//   See gpuscope serve --help.
// `known` are the command's flags ("--address", "-a"); the nearest one within
// a small edit distance is suggested.
std::string UnknownOptionMessage(std::string_view typed, std::string_view command,
                                 const std::vector<std::string>& known);

// UnknownOptionMessage as a usage error; the known flags are read from the
// command's help text (every "--flag" and "-f" it shows).
Status UnknownOption(const Option& option, std::string_view command, std::string_view help = "");

// The flags ("--window", "-w") a help text shows, in order, without repeats.
std::vector<std::string> FlagsInHelp(std::string_view help);

// The one rule for durations. Every duration flag takes explicit units: "500ms",
// "90s", "5m", "1h", "7d", or sums ("1m30s"). A bare number is seconds, except in
// serve's settings (-c/--collect-interval and the others, dcgm-exporter's
// convention: milliseconds; settings.h ParseDuration). Returns seconds (> 0);
// errors name the text and say what a bare number means.
Result<double> ParseCommandDuration(std::string_view text);

// "500ms", "5s", "90s", "5m", "24h": seconds as a duration flag would take them.
std::string FormatDuration(double seconds);

// A duration flag's value, in seconds within [min_seconds, max_seconds]; a bare
// number is seconds. Errors name the flag, the value, the range and what the
// bare number was read as:
//   --interval: '5000' is 5000 s (a bare number is seconds); want 100ms to 1h
//   (write 5000ms for milliseconds)
Result<double> ParseFlagDuration(const Option& option, double min_seconds, double max_seconds);

}  // namespace gpuscope::cli
