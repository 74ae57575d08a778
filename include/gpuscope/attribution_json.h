// JSON form of a Holder, for the commands' --json output: nlohmann::json
// finds it by argument-dependent lookup, so `json{{"holders", holders}}` works.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuscope/attribution.h"

namespace gpuscope {

inline void to_json(nlohmann::json& j, const Holder& h) {
  j = nlohmann::json{{"namespace", h.namespace_name},
                     {"pod", h.pod},
                     {"container", h.container},
                     {"hpc_job", h.hpc_job},
                     {"workload", h.workload}};
}

inline void to_json(nlohmann::json& j, const ProcessHolding& p) {
  j = nlohmann::json{{"pid", p.pid}, {"name", p.name}, {"holder", p.holder}};
}

}  // namespace gpuscope
