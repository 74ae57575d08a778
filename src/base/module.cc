#include "base/module.h"

#include <dlfcn.h>

#include <filesystem>
#include <system_error>

namespace gpuscope {

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
    void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) return Status::Unavailable("module " + path + ": " + ::dlerror());
    void* address = ::dlsym(handle, entry);
    if (!address) return Status::Unavailable("module " + path + " has no " + entry);
    return address;  // never closed: its code serves the process to the end
  }
  return Status::Unavailable("module " + file + " not found (" + errors + ")");
}

}  // namespace gpuscope
