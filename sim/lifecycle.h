// Library lifecycle: reference-counted nvmlInit/nvmlShutdown, the environment
// variables that configure a run (scenario, time, control file, forced init
// error), and the extension functions' state (last error, frozen time).
//
// Thread safety: all functions are safe from any thread (one lifecycle mutex;
// CurrentSim hands out a shared_ptr so a call in flight keeps its Sim alive).
#pragma once

#include <string>

#include "nvml/abi.h"

namespace gpuscope::sim {

nvmlReturn_t Init(unsigned flags);
nvmlReturn_t Shutdown();
// The message of the last failed init ("" when none); valid until next init.
const char* LastError();
// Freezes scenario time (also applied at the next init when uninitialised).
void SetTime(double t);
double GetTime();

// "DRIVER_NOT_LOADED", "NVML_ERROR_DRIVER_NOT_LOADED" or "9" -> 9; -1 if unknown.
int ParseReturnName(const std::string& text);

}  // namespace gpuscope::sim
