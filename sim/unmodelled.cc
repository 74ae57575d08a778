#include "unmodelled.h"

#include "sim.h"

namespace gpuscope::sim {

int UnmodelledAnswer() {
  constexpr int kUninitialized = 1, kNotSupported = 3;
  return CurrentSim() ? kNotSupported : kUninitialized;
}

}  // namespace gpuscope::sim
