#include "cli/options.h"

#include <algorithm>
#include <cctype>
#include <cmath>
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
        return Status::InvalidArgument("Option " + option.flag + " needs a value; see gpuscope " +
                                       std::string(command) + " --help.");
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

Status UnknownOption(const Option& option, std::string_view command) {
  const std::string name(command);
  return Status::InvalidArgument("Unknown option \"" + option.raw + "\" for gpuscope " + name +
                                 "; see gpuscope " + name + " --help.");
}

Result<double> ParseCommandDuration(std::string_view text) {
  auto bad = [&] {
    return Status::InvalidArgument("bad duration '" + std::string(text) +
                                   "' (want e.g. 300, 90s, 5m, 1h, 1m30s)");
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
    if (i < text.size()) {
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
