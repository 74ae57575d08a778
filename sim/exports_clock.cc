// gpuscopeSimLastChange (sim/README.md): the scenario time of the last change
// its author planned (a workload phase, a fault's onset or end, the last point
// of a one-shot custom curve). After it the scenario only settles: the CLI
// evaluates the scenario a settling margin later by default, so every command
// sees the same, finished story (a fault at 5 s is there for `health`).
#include <algorithm>
#include <cmath>

#include "exports_common.h"

using namespace gpuscope::sim;  // NOLINT: C entry points at global scope

namespace {

double LastChange(const Scenario& scenario) {
  double last = 0;
  for (const GpuSpec& gpu : scenario.gpus) {
    for (const Segment& segment : gpu.workload) {
      last = std::max(last, segment.at);
      if (!segment.repeat && !segment.points.empty()) {
        last = std::max(last, segment.at + segment.points.back().first);
      }
    }
    for (const FaultSpec& fault : gpu.faults) {
      last = std::max(last, fault.at);
      if (std::isfinite(fault.until)) last = std::max(last, fault.until);
    }
  }
  return last;
}

}  // namespace

SIM_EXPORT double gpuscopeSimLastChange(void) {
  std::shared_ptr<Sim> sim = CurrentSim();
  return sim ? LastChange(sim->scenario()) : 0;
}
