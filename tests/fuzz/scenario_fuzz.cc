// libFuzzer target: the simulator's scenario YAML parser (sim/scenario.h).
// Any input must parse or fail with a message naming the source.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto scenario = gpuscope::sim::ParseScenario(text, "fuzz.yaml");
  if (!scenario.ok() && scenario.status().message().rfind("fuzz.yaml", 0) != 0) std::abort();
  return 0;
}
