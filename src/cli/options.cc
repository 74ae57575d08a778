#include "cli/options.h"

#include <algorithm>

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

Status UnknownOption(const Option& option, std::string_view command) {
  const std::string name(command);
  return Status::InvalidArgument("Unknown option \"" + option.raw + "\" for gpuscope " + name +
                                 "; see gpuscope " + name + " --help.");
}

}  // namespace gpuscope::cli
