// Reading configuration files (the settings YAML of --config, the counters
// CSV of -f, the web-config of --web-config-file) in one place, so that every
// one of them fails closed the same way: a missing path, a directory, a
// device or FIFO, an unreadable, empty (or blank) or over-large file, and text
// that is not UTF-8 are errors naming the file and the problem. Parsers stay
// pure functions of the returned text.
//
// ReadRegularFile is the same reading without the text checks, for files
// that are not configuration but may be hostile (/proc, cgroups, Slurm
// mapping files): a FIFO or device never blocks the reader, and at most
// `max_bytes` are ever held.
//
// Thread safety: both only read the file system; safe from any thread.
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

// The bytes of the regular file at `path` (empty allowed, no text checks),
// opened without blocking and refused when it is not a regular file or holds
// more than `max_bytes` (files in /proc report size 0, so the limit is
// checked while reading). NotFound when the path does not exist; errors name
// `what`, the path and the problem.
Result<std::string> ReadRegularFile(const std::string& path, std::string_view what,
                                    std::size_t max_bytes);

}  // namespace gpuscope::base
