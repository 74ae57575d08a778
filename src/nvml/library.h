// nvml::Library: the one owner of a loaded libnvidia-ml.so.1 (the driver or
// the simulator). Open() dlopens the library, resolves every symbol of the
// GPUSCOPE_NVML_SYMBOLS table by its exported name (a missing required symbol
// fails, a missing optional one means "not supported"), calls nvmlInit_v2 and
// reads the system versions. The destructor calls nvmlShutdown (only after a
// successful init) and dlcloses.
//
// Errors: every failed NVML call becomes a Status whose message names the call,
// the subject and NVML's text, ending in the return code's name, e.g.
// "nvmlDeviceGetPowerUsage (GPU 3): GPU is lost (NVML_ERROR_GPU_IS_LOST)".
// Codes: NOT_SUPPORTED, FUNCTION_NOT_FOUND (symbol not exported), NO_PERMISSION
// -> kNotSupported; GPU_IS_LOST, DRIVER_NOT_LOADED, TIMEOUT, UNINITIALIZED,
// RESET_REQUIRED and other transient states -> kUnavailable; NOT_FOUND,
// GPU_NOT_FOUND, NO_DATA -> kNotFound; INVALID_ARGUMENT, ARGUMENT_VERSION_MISMATCH
// -> kInvalidArgument; anything else -> kInternal. ReturnCodeOf() recovers the
// exact NVML code from such a Status.
//
// The simulator (sim/) exports a few extension symbols besides NVML's; they
// are resolved at Open into sim() and are all null on a real driver. Driving
// the simulator's clock goes through them, here at the NVML seam.
//
// Thread safety: immutable after Open; all const methods may be called from
// any thread (NVML is thread safe). Devices borrow the Library, which must
// outlive them; it is neither copyable nor movable (owned by unique_ptr).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"
#include "nvml/device.h"

namespace gpuscope::nvml {

struct Api;

// The simulator's extension symbols (sim/README.md); null when absent.
struct SimHooks {
  using LastError = const char* (*)();
  using SetTime = void (*)(double);
  using GetTime = double (*)();
  LastError last_error = nullptr;  // gpuscopeSimLastError: why the last init failed
  SetTime set_time = nullptr;      // gpuscopeSimSetTime: freeze scenario time here
  GetTime get_time = nullptr;      // gpuscopeSimGetTime: the scenario time now

  // True when the library is gpuscope's simulator.
  bool present() const { return last_error != nullptr; }
};

class Library {
 public:
  static constexpr const char* kDefaultPath = "libnvidia-ml.so.1";

  // Loads the library at `path` (a file name searched like the dynamic linker
  // does, or a path) and initializes NVML. The error is one sentence for the
  // common cases: library missing, driver not loaded, simulator scenario
  // invalid (the simulator's own "<file>:<line>: <problem>").
  static Result<std::unique_ptr<Library>> Open(const std::string& path = kDefaultPath);

  ~Library();
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;

  const std::string& path() const { return path_; }
  // System versions read at Open; empty when the driver does not tell.
  const std::string& driver_version() const { return driver_version_; }     // "550.54.15"
  const std::string& nvml_version() const { return nvml_version_; }         // "12.550.54.15"
  const std::string& cuda_driver_version() const { return cuda_version_; }  // "12.8"
  // Bytes between running-process entries: 32 on early 535 drivers, else 24.
  std::size_t process_entry_stride() const { return process_entry_stride_; }

  Result<unsigned> DeviceCount() const;
  Result<Device> DeviceByIndex(unsigned index) const;
  // Accepts GPU and MIG UUIDs.
  Result<Device> DeviceByUuid(const std::string& uuid) const;
  // The process name NVML reports for a host pid.
  Result<std::string> ProcessName(unsigned pid) const;

  // Whether the library exports `exported_name` (a row of the symbol table).
  bool Has(std::string_view exported_name) const;
  // Optional symbols of the table the library does not export.
  std::vector<std::string> MissingSymbols() const;
  // dlsym on the loaded library, for extension symbols outside the table.
  void* FindSymbol(const char* name) const;
  // The simulator's extension symbols (all null on a real driver).
  const SimHooks& sim() const { return sim_; }

  // The typed function table (declared in nvml/api.h; src/nvml only).
  const Api& api() const { return *api_; }
  // Turns an NVML return code into a Status naming `call` and `subject`
  // (e.g. "GPU 3"; empty for system calls). kSuccess gives Ok.
  Status Check(int rc, const char* call, const std::string& subject) const;

 private:
  Library(std::string path, void* handle);
  Status ResolveSymbols();
  Status Init();
  void ReadSystemInfo();

  std::string path_;
  void* handle_ = nullptr;
  std::unique_ptr<Api> api_;
  SimHooks sim_;
  bool initialized_ = false;
  std::string driver_version_;
  std::string nvml_version_;
  std::string cuda_version_;
  std::size_t process_entry_stride_ = 24;
};

// The NVML return code a Status from Library::Check carries; nullopt for an
// ok Status or one that did not come from NVML.
std::optional<int> ReturnCodeOf(const Status& status);
// NVML's name for a return code: "NVML_ERROR_UNKNOWN" (also for codes it
// does not know).
const char* ReturnCodeName(int code);
// True when NVML said GPU_IS_LOST: the device needs a reset or reboot.
bool IsGpuLost(const Status& status);

// "12.8" from nvmlSystemGetCudaDriverVersion's 12080.
std::string FormatCudaVersion(int version);
// True for the 535 drivers before 535.98 that write 32-byte process entries.
bool IsEarly535(std::string_view driver_version);

}  // namespace gpuscope::nvml
