// Optional parts of gpuscope, built as modules beside the binary and loaded on
// first use, so that a process that never uses them never maps their
// libraries: the kubelet and CRI clients (gRPC: about 4 MB resident with its
// dependencies, src/attribution/grpc/), the HTTP client of `baseline` and
// `diagnose --agent` (libcurl: about 1.4 MB, src/baseline/curl/) and the OTLP
// receiver's wire formats (libprotobuf: about 2 MB, src/otlp/wire/). Each
// module exports one C function that returns its table of entry points.
//
// Before a module runs, the agent checks that it is the one built with it
// (a module of another version, installed mid-upgrade while the old agent
// runs, or a truncated copy, crashed the agent): its file, read whole, must be
// a complete ELF file (base/elf_file.h) whose GNU build id is the one the
// build recorded (BuiltModuleBuildId), checked again on the mapped object
// after dlopen, and it must export gpuscope_module_abi equal to kModuleAbi.
// A module refused is an error like a missing one.
//
// A test or benchmark that links a module's code in (to serve the same gRPC
// services in-process, which a second copy of their descriptors would abort)
// uses that copy: the entry function is declared weak, and is not null there.
//
// Thread safety: ModuleTable is safe from any thread (a function-local static).
#pragma once

#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope {

// The version of the module tables' layout (WireCodec, GrpcClients, HttpFetcher); each module
// exports its own as `extern "C" const int gpuscope_module_abi` (base/module_abi/).
inline constexpr int kModuleAbi = 1;

// The GNU build id (hex) of the module `file` built with this binary; "" if none was. Generated
// from the linked modules (cmake/module_build_ids.cmake).
std::string_view BuiltModuleBuildId(std::string_view file);

// dlopens `file` from the executable's folder, else from its lib/ (a dist
// copy), else from ../lib/gpuscope (an install: /usr/bin and /usr/lib/gpuscope),
// once checked (above), and returns the address of the C function `entry`.
Result<void*> LoadModuleEntry(const std::string& file, const char* entry);

// The table of a module: from `linked` when the process holds the module's
// code, else from the module file. Loaded once; a failure is kept too, so
// every caller reports the same reason.
template <typename Table>
const Result<const Table*>& ModuleTable(const char* file, const char* entry,
                                        const Table* (*linked)()) {
  static const Result<const Table*> table = [&]() -> Result<const Table*> {
    if (linked) return linked();
    Result<void*> address = LoadModuleEntry(file, entry);
    if (!address.ok()) return address.status();
    return reinterpret_cast<const Table* (*)()>(*address)();
  }();
  return table;
}

}  // namespace gpuscope
