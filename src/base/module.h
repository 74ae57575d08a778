// Optional parts of gpuscope, built as modules beside the binary and loaded on
// first use, so that a process that never uses them never maps their
// libraries: the kubelet and CRI clients (gRPC: about 4 MB resident with its
// dependencies, src/attribution/grpc/), the HTTP client of `baseline` and
// `diagnose --agent` (libcurl: about 1.4 MB, src/baseline/curl/) and the OTLP
// receiver's wire formats (libprotobuf: about 2 MB, src/otlp/wire/). Each
// module exports one C function that returns its table of entry points.
//
// A test or benchmark that links a module's code in (to serve the same gRPC
// services in-process, which a second copy of their descriptors would abort)
// uses that copy: the entry function is declared weak, and is not null there.
//
// Thread safety: ModuleTable is safe from any thread (a function-local static).
#pragma once

#include <string>

#include "gpuscope/status.h"

namespace gpuscope {

// dlopens `file` from the executable's folder, else from its lib/ (a dist
// copy), else from ../lib/gpuscope (an install: /usr/bin and /usr/lib/gpuscope),
// and returns the address of the C function `entry`.
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
