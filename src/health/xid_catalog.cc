#include "health/xid_catalog.h"

#include <algorithm>
#include <array>

namespace gpuscope::health {
namespace {

using enum Severity;

constexpr std::string_view kSubsystemAction =
    "DCGM counts it as a warning for this subsystem; correlate with other XIDs and escalate if "
    "it repeats";

// clang-format off
constexpr auto kRows = std::to_array<XidInfo>({
  {8, "FIFO idle timeout", "The GPU stopped processing a channel.", "app/driver", kWarn,
   "Restart the application; escalate if it repeats.", false, 0},
  {13, "graphics engine exception",
   "Out-of-bounds access or illegal instruction, usually the application.", "app", kWarn,
   "Restart the application; if it repeats on one GPU only, run diagnostics on that GPU.", true, 0},
  {31, "MMU fault", "GPU page fault (illegal address), usually the application.", "app", kWarn,
   "Restart the application; if it repeats on one GPU only, run diagnostics on that GPU.", true, 0},
  {32, "PBDMA error", "Corrupted push buffer stream, mostly a PCIe quality problem.", "bus", kWarn,
   "Restart the application; if repeated, drain the node and check the PCIe seating.", false, 3},
  {38, "FECS watchdog timeout", "Driver firmware error.", "driver", kInfo,
   "Update the driver or contact support if it recurs.", false, 0},
  {39, "PCIe subsystem event", "Reported by DCGM's PCIe health watch.", "bus", kWarn,
   kSubsystemAction, false, 0},
  {42, "PCIe subsystem event", "Reported by DCGM's PCIe health watch.", "bus", kWarn,
   kSubsystemAction, false, 0},
  {43, "reset channel verification",
   "The application hit a software fault and was torn down; the GPU is healthy.", "app", kInfo,
   "None for the GPU; look at the application.", true, 0},
  {44, "fault during context switch", "Graphics engine fault during a context switch.", "driver",
   kWarn, "Escalate if it recurs.", false, 0},
  {45, "preemptive removal",
   "Channels cleaned up after an abort, kill, reset or an earlier error.", "secondary", kInfo,
   "Act on the companion XID; alone on NVSwitch hosts, restart Fabric Manager.", true, 0},
  {46, "GPU stopped processing", "The GPU stopped processing work.", "HW/driver", kCritical,
   "Reset the GPU.", false, 0},
  {48, "double-bit ECC error", "Uncorrectable memory error; a reset is needed to clear it.",
   "memory HW", kCritical,
   "Drain, reset the GPU, run field diagnostics; RMA if it recurs. With XID 63/64: drain and "
   "reset.", false, 0},
  {54, "power subsystem event", "Reported by DCGM's power health watch.", "power", kWarn,
   kSubsystemAction, false, 0},
  {56, "power subsystem event", "Reported by DCGM's power health watch.", "power", kWarn,
   kSubsystemAction, false, 0},
  {57, "power subsystem event", "Reported by DCGM's power health watch.", "power", kWarn,
   kSubsystemAction, false, 0},
  {58, "power subsystem event", "Reported by DCGM's power health watch.", "power", kWarn,
   kSubsystemAction, false, 0},
  {60, "thermal subsystem event", "Reported by DCGM's thermal health watch.", "thermal", kWarn,
   kSubsystemAction, false, 0},
  {61, "PMU breakpoint", "Internal micro-controller breakpoint (unused on Ampere and newer).",
   "firmware", kInfo, "Reset the GPU if seen.", false, 0},
  {62, "PMU halt", "Internal micro-controller halted.", "HW/firmware", kCritical,
   "Reset the GPU; check the cooling.", false, 0},
  {63, "row remap / page retirement event",
   "A row remap or page retirement was recorded in the InfoROM; it takes effect after a reset.",
   "memory", kWarn, "Reset the GPU at the next maintenance window.", false, 0},
  {64, "row remap / page retirement failure", "Recording a row remap or page retirement failed.",
   "memory HW", kCritical, "Drain, reset the GPU or reboot the node; RMA candidate.", false, 0},
  {67, "NVLink subsystem event", "Reported by DCGM's NVLink health watch.", "interconnect", kWarn,
   kSubsystemAction, false, 0},
  {68, "NVDEC error", "Video decoder exception.", "app/HW", kWarn, "Restart the application.",
   true, 0},
  {69, "graphics class error", "Graphics class error.", "driver/HW", kWarn,
   "Restart the application; if repeated, reset the GPU.", false, 0},
  {73, "NVLink subsystem event", "Reported by DCGM's NVLink health watch.", "interconnect", kWarn,
   kSubsystemAction, false, 0},
  {74, "NVLink error", "GPU-GPU or GPU-NVSwitch link problem, on this GPU or the far end.",
   "interconnect HW", kCritical,
   "Reset the GPU; if it recurs after the reset, drain the node and RMA.", false, 0},
  {79, "fallen off the bus", "The driver cannot reach the GPU over PCIe.", "bus/HW", kCritical,
   "Drain the node and reboot it; RMA if it recurs.", false, 0},
  {92, "excessive SBE interrupts", "High rate of corrected ECC errors.", "memory", kWarn,
   "Track the corrected ECC rate; RMA if it stays excessive.", false, 0},
  {94, "contained ECC error", "Uncorrectable memory error contained to one application.",
   "memory", kWarn, "Restart the application; reset the GPU when convenient.", false, 0},
  {95, "uncontained ECC error", "Uncorrectable memory error affecting several applications.",
   "memory", kCritical, "Drain, reset the GPU (reboot the node if MIG is off).", false, 0},
  {109, "context-switch timeout", "Context-switch timeout.", "driver/HW", kCritical,
   "Reset the GPU.", false, 0},
  {110, "security fault", "Security fault.", "HW", kCritical,
   "Cold-reset the GPU; RMA if it recurs.", false, 0},
  {119, "GSP RPC timeout", "The GSP firmware did not answer the driver.", "firmware", kCritical,
   "Reset the GPU; power-cycle if persistent; update the driver.", false, 0},
  {120, "GSP error", "Error in code running on the GSP.", "firmware", kCritical,
   "Reset the GPU; power-cycle if persistent; update the driver.", false, 0},
  {121, "C2C corrected error", "Corrected error on the Grace-Hopper/Blackwell C2C link.", "bus",
   kInfo, "Reset at a service window.", false, 0},
  {136, "NVLink training failed", "An NVLink failed to train.", "interconnect", kCritical,
   "Reset the GPU.", false, 0},
  {137, "NVLink subsystem event", "Reported by DCGM's NVLink health watch.", "interconnect", kWarn,
   kSubsystemAction, false, 0},
  {140, "unrecovered ECC escape", "Uncorrectable memory error the driver could not remap.",
   "memory", kCritical, "Reset the GPU; RMA if it recurs.", false, 0},
  {143, "GPU init error", "The GPU failed to initialize.", "HW/driver", kCritical,
   "Reset the GPU; contact support.", false, 0},
  {144, "NVLink5 SAW error", "NVLink5 unit error (Blackwell).", "interconnect", kCritical,
   "Reset the GPU; follow the XID 154 recovery action.", false, 0},
  {145, "NVLink5 RLW error", "NVLink5 unit error (Blackwell).", "interconnect", kCritical,
   "Reset the GPU; follow the XID 154 recovery action.", false, 0},
  {146, "NVLink5 TLW error", "NVLink5 unit error (Blackwell).", "interconnect", kCritical,
   "Reset the GPU; follow the XID 154 recovery action.", false, 0},
  {147, "NVLink5 TREX error", "NVLink5 unit error (Blackwell).", "interconnect", kCritical,
   "Reset the GPU; follow the XID 154 recovery action.", false, 0},
  {148, "NVLink5 NVLPW error", "NVLink5 unit error (Blackwell).", "interconnect", kCritical,
   "Reset the GPU; follow the XID 154 recovery action.", false, 0},
  {149, "NVLink5 NETIR error", "NVLink5 unit error (Blackwell).", "interconnect", kCritical,
   "Reset the GPU; follow the XID 154 recovery action.", false, 0},
  {150, "NVLink5 MSE error", "NVLink5 unit error (Blackwell).", "interconnect", kCritical,
   "Reset the GPU; follow the XID 154 recovery action.", false, 0},
  {154, "recovery action changed",
   "Comes with another XID and states the action the GPU needs.", "info", kInfo,
   "Do what it announces (see the GPU recovery action).", false, 0},
});
// clang-format on

constexpr bool Sorted() {
  for (std::size_t i = 1; i < kRows.size(); ++i) {
    if (kRows[i - 1].code >= kRows[i].code) return false;
  }
  return true;
}
static_assert(Sorted(), "XID rows must be in strictly increasing code order");

const XidInfo* Find(unsigned code) {
  auto it = std::lower_bound(kRows.begin(), kRows.end(), code,
                             [](const XidInfo& row, unsigned c) { return row.code < c; });
  return (it != kRows.end() && it->code == code) ? &*it : nullptr;
}

}  // namespace

std::string_view SeverityName(Severity s) {
  switch (s) {
    case kInfo:
      return "info";
    case kWarn:
      return "warn";
    case kCritical:
      return "critical";
  }
  return "warn";
}

XidInfo LookupXid(unsigned code) {
  if (const XidInfo* row = Find(code)) return *row;
  XidInfo unknown;
  unknown.code = code;
  unknown.name = "unknown XID";
  unknown.meaning = "Not in gpuscope's catalog (a newer driver, or 999: unknown to NVML).";
  unknown.klass = "unknown";
  unknown.severity = kWarn;
  unknown.action = "Look the code up in NVIDIA's XID catalog and the kernel log (dmesg).";
  return unknown;
}

bool IsKnownXid(unsigned code) { return Find(code) != nullptr; }

std::span<const XidInfo> XidCatalog() { return kRows; }

Severity XidSeverity(unsigned code, uint64_t count) {
  const XidInfo info = LookupXid(code);
  if (info.escalate_after > 0 && count >= info.escalate_after) return kCritical;
  return info.severity;
}

}  // namespace gpuscope::health
