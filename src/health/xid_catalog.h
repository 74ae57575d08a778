// The XID catalog: what each XID code means, how bad it is and what an
// operator does about it (reference/xid.md: NVIDIA's catalog, DCGM's health
// policy, device-plugin and cloud runbooks). The severity column is the fleet
// policy gpuscope ships. Unknown codes are never an error: LookupXid returns a
// generic "unknown" entry so that a new driver's XID is still counted and shown.
//
// Thread safety: immutable constexpr data and pure functions.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace gpuscope::health {

// Ordered: a larger value is worse.
enum class Severity : uint8_t { kInfo, kWarn, kCritical };

std::string_view SeverityName(Severity s);  // "info", "warn", "critical"

struct XidInfo {
  unsigned code = 0;
  std::string_view name;     // "fallen off the bus"
  std::string_view meaning;  // one sentence
  std::string_view klass;    // "memory HW", "app", "interconnect HW", ...
  Severity severity = Severity::kWarn;
  std::string_view action;  // what the operator does
  // Kubernetes' device plugin treats it as an application error: the GPU
  // stays schedulable.
  bool application = false;
  // When > 0: this many occurrences within the XID window escalate the
  // severity to critical (XID 32: repeated PBDMA errors point at the bus).
  unsigned escalate_after = 0;
};

// The entry for `code`; for a code the catalog lacks, a generic entry with
// that code, severity kWarn and the advice to look it up.
XidInfo LookupXid(unsigned code);
// True when the catalog has a row for `code`.
bool IsKnownXid(unsigned code);
// Every row, in code order.
std::span<const XidInfo> XidCatalog();

// The severity of `count` occurrences of `code` within the window (applies
// escalate_after).
Severity XidSeverity(unsigned code, uint64_t count);

}  // namespace gpuscope::health
