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

// "Unknown option "--x" for gpuscope <command>; see gpuscope <command> --help."
Status UnknownOption(const Option& option, std::string_view command);

// A subcommand's duration flag (health --watch, diagnose --window, top's
// interval, report --since): "300", "300s", "5m", "1h", "7d", "1m30s" -> seconds (> 0); a bare
// number is seconds. Errors name the text. (serve's settings read durations
// with ParseDuration in settings.h, where a bare number is milliseconds.)
Result<double> ParseCommandDuration(std::string_view text);

}  // namespace gpuscope::cli
