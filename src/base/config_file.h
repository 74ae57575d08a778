// Reading configuration files (the settings YAML of --config, the counters
// CSV of -f, the web-config of --web-config-file) in one place, so that every
// one of them fails closed the same way: a missing path, a directory, a
// device or FIFO, an unreadable, empty (or blank) or over-large file, and text
// that is not UTF-8 are errors naming the file and the problem. Parsers stay
// pure functions of the returned text.
//
// Thread safety: ReadConfigFile only reads the file system; safe from any
// thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::base {

// Config files are small; anything above this is a mistake (or an attack).
inline constexpr std::size_t kMaxConfigFileBytes = 4 << 20;

// The whole text of the regular file at `path`. `what` names the kind of file
// in errors ("web-config file"): "web-config file /etc/x.yml: is a directory".
Result<std::string> ReadConfigFile(const std::string& path, std::string_view what);

}  // namespace gpuscope::base
