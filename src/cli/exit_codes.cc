#include "cli/exit_codes.h"

#include "nvml/abi.h"

namespace gpuscope::cli {
namespace {

// clang-format off
constexpr ExitCodeRow kExitCodes[] = {
  {Exit::kOk,           "ok",            "done; health: every GPU ok (or warns, no --strict)"},
  {Exit::kHealthWarn,   "health warn",   "health --strict: a GPU warns"},
  {Exit::kUsage,        "usage",         "unknown option or command, bad value, missing argument"},
  {Exit::kNotSupported, "not supported", "the GPU or driver lacks the feature"},
  {Exit::kNoPermission, "no permission", "the driver refused this user"},
  {Exit::kNotFound,     "not found",     "no such GPU (-i), scenario, file, job or pod"},
  {Exit::kNoDriver,     "no driver",     "NVIDIA driver not loaded or its library missing, "
                                         "or NVML stopped"},
  {Exit::kGpuLost,      "GPU lost",      "a GPU fell off the bus (XID 79, GPU_IS_LOST)"},
  {Exit::kHealthFailed, "health failed", "health: a GPU fails a check"},
  {Exit::kUnreachable,  "unreachable",   "an agent, Prometheus or the kubelet did not answer"},
  {Exit::kInternal,     "internal",      "anything else (a bug: please report it)"},
};
// clang-format on

// An NVML error keeps nvidia-smi's code for its nvmlReturn_t where there is one.
Exit ForNvmlReturn(int rc, Exit otherwise) {
  switch (rc) {
    case nvml::kNoPermission:
      return Exit::kNoPermission;
    case nvml::kDriverNotLoaded:
    case nvml::kLibraryNotFound:
      return Exit::kNoDriver;
    case nvml::kGpuIsLost:
      return Exit::kGpuLost;
    default:
      return otherwise;
  }
}

}  // namespace

std::span<const ExitCodeRow> ExitCodeTable() { return kExitCodes; }

Exit ExitFor(const Status& status) {
  Exit by_code = Exit::kInternal;
  switch (status.code()) {
    case Status::Code::kOk:
      return Exit::kOk;
    case Status::Code::kInvalidArgument:
      by_code = Exit::kUsage;
      break;
    case Status::Code::kNotSupported:
      by_code = Exit::kNotSupported;
      break;
    case Status::Code::kNotFound:
      by_code = Exit::kNotFound;
      break;
    case Status::Code::kUnavailable:
      // NVML's own (it carries its nvmlReturn_t) is the driver; anything
      // else unavailable is a source the command reads over a socket.
      by_code = status.detail() ? Exit::kNoDriver : Exit::kUnreachable;
      break;
    case Status::Code::kInternal:
      by_code = Exit::kInternal;
      break;
  }
  return status.detail() ? ForNvmlReturn(*status.detail(), by_code) : by_code;
}

std::string ExitCodeHelp() {
  std::string text = "\nExit status (every command):\n";
  for (const ExitCodeRow& row : kExitCodes) {
    std::string code = std::to_string(static_cast<int>(row.code));
    code.resize(5, ' ');
    std::string name(row.name);
    name.resize(15, ' ');
    text += "  " + code + name + std::string(row.meaning) + "\n";
  }
  return text;
}

std::string ExitCodeMarkdown() {
  std::string text = "| code | name | meaning |\n|---|---|---|\n";
  for (const ExitCodeRow& row : kExitCodes) {
    text += "| " + std::to_string(static_cast<int>(row.code)) + " | " + std::string(row.name) +
            " | " + std::string(row.meaning) + " |\n";
  }
  return text;
}

Status NvmlUnavailable(std::string message) {
  // NVML_ERROR_UNKNOWN: the return code that ended it is not known here.
  return Status::Unavailable(std::move(message)).WithDetail(nvml::kUnknown);
}

Status GpuLost(std::string message) {
  return Status::Unavailable(std::move(message)).WithDetail(nvml::kGpuIsLost);
}

}  // namespace gpuscope::cli
