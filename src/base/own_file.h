// Writing a file at a path the user named (run --report, query -f) without
// being led elsewhere: gpuscope often runs as root, and a path in a sticky
// directory such as /tmp may hold another user's symbolic link, hard link,
// FIFO or file, placed there to make root truncate or write through it.
//
// OpenOwnFile opens the path for writing only when what is there, or what it
// creates, is a plain file of the calling (effective) user's:
//  - the last component is never followed when it is a symbolic link;
//  - a symbolic link in the directories above it is followed only when it
//    belongs to the caller or to root (another user's link is refused);
//  - an existing file must be a regular file, owned by the caller, with one
//    link, or the null device; anything else is refused, untouched, with the
//    reason.
// A new file is created 0644; an accepted existing one is truncated.
//
// Thread safety: no shared state; the usual file-system races are what the
// checks above close (each is made on the opened descriptor, not on a name).
#pragma once

#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::base {

// A writable descriptor (close it) or NotFound naming the path and why.
Result<int> OpenOwnFile(const std::string& path);

// OpenOwnFile, then all of `text`, then close.
Status WriteOwnFile(const std::string& path, std::string_view text);

}  // namespace gpuscope::base
