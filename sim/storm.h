// XID storms (fault kind `xid-storm`): while active, `rate` XID events per
// second on one GPU. The count fired by scenario time t is a pure function of
// t (one event at `at`, then one every 1/rate s until `until`), so a storm's
// total is exact however often the simulator is pumped.
//
// Thread safety: called with the GPU's lock held (sim.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "faults.h"
#include "nvml/abi.h"

namespace gpuscope::sim::storm {

// Events a storm has fired by scenario time t.
uint64_t DueBy(const FaultSpec& f, double t);

// Fires the events of g's storms that came due by t since the last call
// (`fired` holds the counts, one per fault, grown as faults are added) and
// returns the scenario time of the next storm event (infinity when none).
double FireDue(unsigned g, nvmlDevice_t device, const std::vector<FaultSpec>& faults,
               std::vector<uint64_t>& fired, double t);

}  // namespace gpuscope::sim::storm
