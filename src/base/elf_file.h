// What the agent checks of a module's file before dlopen (base/module.h): an
// ELF shared object for this machine, whole, and its GNU build id. A file cut
// short (a copy interrupted, a full disk) is refused here, before any page of
// it is mapped: the loader would map it and the process die of SIGBUS on the
// first page past the end.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope {

// Copies `size` bytes at `offset` of a file into `out`; false if they are not all there.
using ReadAt = std::function<bool(uint64_t offset, uint64_t size, void* out)>;

// The GNU build id (lowercase hex) of an ELF file of `file_size` bytes, read
// through `read` (only its headers and notes: a few KiB); an error naming what
// is wrong when it is not a 64-bit little-endian shared object of this
// machine, when a header, segment or section lies past its end (truncated),
// or when it carries no build id.
Result<std::string> ElfBuildId(uint64_t file_size, const ReadAt& read);

// The same, of a whole file's bytes in memory.
Result<std::string> ElfBuildId(std::string_view image);

// The GNU build id of an object mapped by the loader, from its program headers
// (dl_iterate_phdr's view): `base` is its load address. "" if it has none.
std::string MappedBuildId(const void* phdrs, int phnum, const char* base);

}  // namespace gpuscope
