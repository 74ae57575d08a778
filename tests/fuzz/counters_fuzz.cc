// libFuzzer target: the dcgm-exporter counters CSV parser (export/counters.h).
// Any input must parse or fail with a message; the message must be bounded and
// printable (untrusted input is echoed only as a short escaped excerpt), and a
// parsed help text must be UTF-8 without control characters.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "base/text.h"
#include "export/counters.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  gpuscope::Result<gpuscope::prom::CounterSet> set =
      gpuscope::prom::ParseCounters(text, "fuzz.csv");
  if (!set.ok()) {
    const std::string& message = set.status().message();
    if (!gpuscope::base::TextProblem(message).empty() || message.size() > 1024) std::abort();
    return 0;
  }
  for (const gpuscope::prom::CounterEntry& entry : set->entries) {
    if (!gpuscope::base::TextProblem(entry.help).empty()) std::abort();
    if (entry.name.empty() || entry.name.size() > 128) std::abort();
  }
  return 0;
}
