#include "storm.h"

#include <cmath>
#include <limits>

#include "events.h"

namespace gpuscope::sim::storm {

uint64_t DueBy(const FaultSpec& f, double t) {
  if (f.kind != FaultKind::kXidStorm || t < f.at) return 0;
  const double span = std::min(t, f.until) - f.at;
  // One event at `at`; an event due exactly at `until` is past the storm.
  uint64_t n = static_cast<uint64_t>(std::floor(span * f.rate)) + 1;
  if (t >= f.until && std::floor(span * f.rate) == span * f.rate) --n;
  return n;
}

double FireDue(unsigned g, nvmlDevice_t device, const std::vector<FaultSpec>& faults,
               std::vector<uint64_t>& fired, double t) {
  double next = std::numeric_limits<double>::infinity();
  fired.resize(faults.size(), 0);
  for (size_t i = 0; i < faults.size(); ++i) {
    const FaultSpec& f = faults[i];
    if (f.kind != FaultKind::kXidStorm) continue;
    for (const uint64_t due = DueBy(f, t); fired[i] < due; ++fired[i]) {
      events::Fire(g, device, 0x8, f.xid);  // XidCriticalError
    }
    const double at = f.at + static_cast<double>(fired[i]) / f.rate;
    if (at < f.until) next = std::min(next, at);
  }
  return next;
}

}  // namespace gpuscope::sim::storm
