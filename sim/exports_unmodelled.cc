// Every NVML entry point of nvml_entry_points.def, generated from that one
// table: each name is a weak symbol aliasing a stub that answers
// NOT_SUPPORTED (UNINITIALIZED before init), as a real driver does for a
// feature the board lacks. A real definition of the same name anywhere in
// sim/ is a strong symbol and wins at link time, so "modelled" is simply
// "defined elsewhere"; nothing here lists what is modelled.
//
// The stubs take no parameters: every NVML function returns an int-sized
// nvmlReturn_t and the SysV calling convention lets the caller pass and
// clean up arguments the callee ignores.
#include <cstring>

#include "unmodelled.h"

#define SIM_STUB(name)                                                          \
  extern "C" __attribute__((visibility("hidden"))) int gpuscope_stub_##name() { \
    return ::gpuscope::sim::UnmodelledAnswer();                                 \
  }                                                                             \
  extern "C" __attribute__((weak, visibility("default"), alias("gpuscope_stub_" #name))) int name();

#define X(name) SIM_STUB(name)
#include "nvml_entry_points.def"
#undef X

namespace {

struct Entry {
  const char* name;
  int (*resolved)();  // the symbol as linked: the stub or a real definition
  int (*stub)();
};

const Entry kEntries[] = {
#define X(name) {#name, &name, &gpuscope_stub_##name},
#include "nvml_entry_points.def"
#undef X
};

}  // namespace

// 1 when `name` is an entry point the simulator does not model (its stub
// answers), 0 when it is modelled, -1 when it is not an NVML entry point.
extern "C" __attribute__((visibility("default"))) int gpuscopeSimUnmodelled(const char* name) {
  if (name == nullptr) return -1;
  for (const Entry& e : kEntries) {
    if (std::strcmp(e.name, name) == 0) return e.resolved == e.stub ? 1 : 0;
  }
  return -1;
}
