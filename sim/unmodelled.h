// What an NVML entry point the simulator does not model answers, and the
// lookup behind gpuscopeSimUnmodelled. Kept apart from nvml/abi.h on purpose:
// exports_unmodelled.cc defines every entry point with an empty parameter
// list, which would clash with abi.h's prototypes in the same file.
//
// Thread safety: safe from any thread.
#pragma once

namespace gpuscope::sim {

// NVML_ERROR_UNINITIALIZED before nvmlInit, else NVML_ERROR_NOT_SUPPORTED.
int UnmodelledAnswer();

}  // namespace gpuscope::sim
