// A GPU's sampling state by name, as the JSON API writes it (/api/v1/gpus,
// /api/v1/snapshot) and the CLI reads it back from an agent.
//
// Thread safety: pure function.
#pragma once

#include <string_view>

#include "gpuscope/snapshot.h"

namespace gpuscope::web {

constexpr std::string_view GpuStateName(GpuState state) {
  switch (state) {
    case GpuState::kOk:
      return "ok";
    case GpuState::kLost:
      return "lost";
    case GpuState::kStale:
      return "stale";
    case GpuState::kError:
      break;
  }
  return "error";
}

}  // namespace gpuscope::web
