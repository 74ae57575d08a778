// Linked into each module (not into the agent): the table layout it was built with, which the
// agent checks before using the module (base/module.h).
#include "base/module.h"

extern "C" __attribute__((visibility("default"))) const int gpuscope_module_abi =
    gpuscope::kModuleAbi;
