#include "cli/options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>

namespace gpuscope::cli {

Status ForEachOption(const std::vector<std::string>& args, std::string_view command,
                     std::initializer_list<std::string_view> value_flags,
                     const OptionHandler& handle) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    Option option{args[i], "", false, args[i]};
    const std::size_t eq = option.flag.find('=');
    if (option.flag.starts_with("--") && eq != std::string::npos) {
      option.value = option.flag.substr(eq + 1);
      option.flag.resize(eq);
      option.inline_value = true;
    }
    const bool takes_value =
        std::find(value_flags.begin(), value_flags.end(), option.flag) != value_flags.end();
    if (takes_value && !option.inline_value) {
      if (i + 1 >= args.size()) {
        // The summary is the command without a name: "see gpuscope --help".
        const std::string named = command.empty() ? "" : std::string(command) + " ";
        return Status::InvalidArgument("Option " + option.flag + " needs a value; see gpuscope " +
                                       named + "--help.");
      }
      option.value = args[++i];
    }
    GPUSCOPE_RETURN_IF_ERROR(handle(option));
  }
  return Status::Ok();
}

bool TakeClientOption(const Option& option, baseline::ClientOptions& client) {
  std::string* field = option.flag == "--ca-file"                    ? &client.ca_file
                       : option.flag == "--cert-file"                ? &client.cert_file
                       : option.flag == "--key-file"                 ? &client.key_file
                       : option.flag == "--basic-auth-user"          ? &client.username
                       : option.flag == "--basic-auth-password-file" ? &client.password_file
                                                                     : nullptr;
  if (field != nullptr) *field = option.value;
  return field != nullptr;
}

namespace {

// Levenshtein distance, for "did you mean".
std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string NearMiss(std::string_view typed, const std::vector<std::string>& known) {
  // A typo or two in a long word; a one-letter flag has no near miss.
  std::size_t best = typed.size() <= 3 ? 0 : std::clamp<std::size_t>(typed.size() / 4, 1, 2) + 1;
  std::string suggestion;
  for (const std::string& candidate : known) {
    const std::size_t d = EditDistance(typed, candidate);
    if (d < best) {
      best = d;
      suggestion = candidate;
    }
  }
  return suggestion;
}

std::string UnknownOptionMessage(std::string_view typed, std::string_view command,
                                 const std::vector<std::string>& known) {
  const std::string name = command.empty() ? "gpuscope" : "gpuscope " + std::string(command);
  const std::string suggestion = NearMiss(typed.substr(0, typed.find('=')), known);
  return "Unknown option \"" + std::string(typed) + "\" for " + name +
         (suggestion.empty() ? "." : "; did you mean " + suggestion + "?") + " See " + name +
         " --help.";
}

std::vector<std::string> FlagsInHelp(std::string_view help) {
  std::vector<std::string> flags;
  for (std::size_t i = 0; i < help.size(); ++i) {
    const bool starts = help[i] == '-' && (i == 0 || std::string_view(" [,(|").find(help[i - 1]) !=
                                                         std::string_view::npos);
    if (!starts) continue;
    std::size_t end = i + 1;
    while (end < help.size() &&
           (std::isalnum(static_cast<unsigned char>(help[end])) || help[end] == '-')) {
      ++end;
    }
    std::string flag(help.substr(i, end - i));
    if (flag.size() < 2 || flag == "--" || std::isdigit(static_cast<unsigned char>(flag[1]))) {
      continue;
    }
    if (std::find(flags.begin(), flags.end(), flag) == flags.end()) flags.push_back(flag);
    i = end;
  }
  return flags;
}

Status UnknownOption(const Option& option, std::string_view command, std::string_view help) {
  return Status::InvalidArgument(UnknownOptionMessage(option.raw, command, FlagsInHelp(help)));
}

std::string FormatDuration(double seconds) {
  auto whole = [](double v) { return std::fabs(v - std::round(v)) < 1e-9; };
  auto text = [](double v) { return std::to_string(std::llround(v)); };
  if (seconds < 1 || !whole(seconds)) return text(seconds * 1000) + "ms";
  if (seconds >= 86400 && whole(seconds / 86400)) return text(seconds / 86400) + "d";
  if (seconds >= 3600 && whole(seconds / 3600)) return text(seconds / 3600) + "h";
  if (seconds >= 60 && whole(seconds / 60)) return text(seconds / 60) + "m";
  return text(seconds) + "s";
}

Result<double> ParseFlagDuration(const Option& option, double min_seconds, double max_seconds) {
  Result<double> seconds = ParseCommandDuration(option.value);
  if (!seconds.ok())
    return Status::InvalidArgument(option.flag + ": " + seconds.status().message());
  if (*seconds >= min_seconds && *seconds <= max_seconds) return seconds;
  const bool bare =
      !option.value.empty() && std::all_of(option.value.begin(), option.value.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c)) || c == '.';
      });
  std::string text = option.flag + ": '" + option.value + "' is " + FormatDuration(*seconds);
  if (bare) text += " (a bare number is seconds)";
  text += "; want " + FormatDuration(min_seconds) + " to " + FormatDuration(max_seconds);
  if (bare && *seconds > max_seconds) text += " (write " + option.value + "ms for milliseconds)";
  return Status::InvalidArgument(text);
}

Result<double> ParseCommandDuration(std::string_view text) {
  auto bad = [&] {
    // Appended, not "'" + std::string(text): GCC 12 at -O3 reads that as an
    // overlapping memcpy (-Werror=restrict, a false positive).
    std::string message = "'";
    message.append(text).append(
        "' is not a duration: want e.g. 90s, 5m, 1h, 500ms, 1m30s (a bare number is seconds)");
    return Status::InvalidArgument(message);
  };
  if (text.empty()) return bad();
  double total = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'))
      ++i;
    if (i == start) return bad();
    double v = 0;
    try {
      v = std::stod(std::string(text.substr(start, i - start)));
    } catch (...) {
      return bad();
    }
    double unit = 1;
    if (text.substr(i).starts_with("ms")) {
      unit = 0.001;
      i += 2;
    } else if (i < text.size()) {
      char c = text[i++];
      unit = c == 's' ? 1 : c == 'm' ? 60 : c == 'h' ? 3600 : c == 'd' ? 86400 : 0;
      if (unit == 0) return bad();
    } else if (start != 0) {
      return bad();  // "1m30" is ambiguous
    }
    total += v * unit;
  }
  if (!(total > 0) || !std::isfinite(total)) return bad();
  return total;
}

}  // namespace gpuscope::cli
