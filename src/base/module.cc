#include "base/module.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "base/elf_file.h"

namespace gpuscope {

namespace {

// Refused, before dlopen maps it, unless the module's file is a whole ELF file whose build id
// is the one this binary was built with (only its headers and notes are read).
Status CheckModuleFile(const std::string& path, std::string_view expected) {
  // O_NONBLOCK: a FIFO in its place must not hang the caller (it is then refused).
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::Unavailable("module " + path + ": " + std::strerror(errno));
  struct stat info;
  Result<std::string> id = Status::Unavailable("not a regular file");
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode)) {
    id = ElfBuildId(info.st_size, [fd](uint64_t offset, uint64_t size, void* out) {
      return ::pread(fd, out, size, static_cast<off_t>(offset)) == static_cast<ssize_t>(size);
    });
  }
  ::close(fd);
  if (!id.ok()) return Status::Unavailable("module " + path + " refused: " + id.status().message());
  if (*id != expected) {
    return Status::Unavailable("module " + path + " refused: it is not the one this gpuscope was " +
                               "built with (build id " + *id + ", expected " +
                               (expected.empty() ? "none" : std::string(expected)) +
                               "; installed mid-upgrade? restart the agent)");
  }
  return Status::Ok();
}

// The build id of the object `handle` as the loader mapped it: the file may have been replaced
// between the check and dlopen (a package upgrade renames the new one in).
std::string LoadedBuildId(void* handle) {
  link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr) return "";
  struct Search {
    ElfW(Addr) base;
    std::string id;
  } search{map->l_addr, ""};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_addr != s->base) return 0;
        s->id = MappedBuildId(info->dlpi_phdr, info->dlpi_phnum,
                              reinterpret_cast<const char*>(info->dlpi_addr));
        return 1;
      },
      &search);
  return search.id;
}

Result<void*> LoadChecked(const std::string& path, const char* entry, std::string_view expected) {
  if (Status checked = CheckModuleFile(path, expected); !checked.ok()) return checked;
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) return Status::Unavailable("module " + path + ": " + ::dlerror());
  // Never closed, even when refused: its code may hold thread-local or static state.
  if (LoadedBuildId(handle) != expected) {
    return Status::Unavailable("module " + path + " refused: replaced while it was loaded");
  }
  const auto* abi = static_cast<const int*>(::dlsym(handle, "gpuscope_module_abi"));
  if (!abi || *abi != kModuleAbi) {
    return Status::Unavailable("module " + path + " refused: module ABI " +
                               (abi ? std::to_string(*abi) : "missing") + ", expected " +
                               std::to_string(kModuleAbi));
  }
  void* address = ::dlsym(handle, entry);
  if (!address) return Status::Unavailable("module " + path + " has no " + entry);
  return address;  // its code serves the process to the end
}

}  // namespace

Result<void*> LoadModuleEntry(const std::string& file, const char* entry) {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return Status::Unavailable("module " + file + ": cannot find the executable's folder");
  std::string errors;
  const std::filesystem::path bin = exe.parent_path();
  // Beside the binary (a build), its lib/ (dist), ../lib/gpuscope (an install, the image).
  for (const std::filesystem::path& dir : {bin, bin / "lib", bin.parent_path() / "lib/gpuscope"}) {
    const std::string path = (dir / file).string();
    if (!std::filesystem::exists(path, ec)) {
      errors += (errors.empty() ? "" : "; ") + path + ": missing";
      continue;
    }
    return LoadChecked(path, entry, BuiltModuleBuildId(file));
  }
  return Status::Unavailable("module " + file + " not found (" + errors + ")");
}

}  // namespace gpuscope
