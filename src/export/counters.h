// dcgm-exporter's counters file (`-f`): which DCGM-named families gpuscope
// serves, with their Prometheus type and help, and which string fields become
// labels on every DCGM series. The files dcgm-exporter ships parse unchanged.
//
// Read exactly as dcgm-exporter reads it (its counters package is the
// reference): records as Go's encoding/csv splits them (csv_records.h: '#' in
// the first column starts a comment, empty lines are skipped, quoted fields),
// then, per record:
//   - spaces (only spaces) around each field are trimmed; exactly 3 fields;
//   - the name resolves, in this order, to
//       1. a DCGM_EXP_* name: the health module renders XID_ERRORS_COUNT and
//          GPU_HEALTH_STATUS; the type is not checked, as dcgm-exporter does
//          not; P2P_STATUS (needs DCGM) and CLOCK_EVENTS_COUNT (not rendered
//          yet) are skipped with a warning;
//       2. a catalog DCGM name or alias, also under a go-dcgm legacy name
//          (`dcgm_gpu_temp`): a served family, named as in the file;
//       3. a label field (dcgm_fields.h): a label on every DCGM series;
//       4. any other real DCGM field: skipped, with a warning;
//       5. anything else: an error `<file>:<line>: ...` (dcgm-exporter: "could
//          not find DCGM field");
//   - the type is gauge, counter or label in lower case, or histogram and
//     summary (a warning: served as gauges); anything else is an error.
// Where dcgm-exporter is lenient, gpuscope accepts the file and warns: a name
// listed again (the first entry wins, as only it ever matches in
// dcgm-exporter), a numeric field declared label, a string field declared
// gauge or counter (both skipped). The one rule stricter than dcgm-exporter's:
// a help text that is not UTF-8 or holds control characters is refused. The
// file's type and help win over the catalog's; an empty help falls back to
// the catalog's. A file that lists nothing at all is an error.
//
// Thread safety: CounterSet is an immutable value once parsed; the functions
// are pure except LoadCountersFile, which reads a file.
#pragma once

#include <bitset>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "export/dcgm_fields.h"
#include "gpuscope/catalog.h"
#include "gpuscope/status.h"

namespace gpuscope::prom {

enum class CounterType : uint8_t { kGauge, kCounter, kLabel };

enum class CounterKind : uint8_t {
  kMetric,    // a catalog metric, rendered by the Renderer
  kLabel,     // a string field, a label on every DCGM series
  kExporter,  // a DCGM_EXP_* family rendered by another module
};

struct CounterEntry {
  std::string name;  // the DCGM name, as in the file
  CounterType type = CounterType::kGauge;
  std::string help;  // the file's help, or the catalog's when the file's is empty
  int line = 0;      // 1-based line in the file
  CounterKind kind = CounterKind::kMetric;
  Metric metric{};           // kMetric only
  LabelField label_field{};  // kLabel only
};

struct CounterSet {
  std::string source;                 // file name used in messages
  std::vector<CounterEntry> entries;  // served entries, in file order
  std::vector<std::string> warnings;  // skipped names, one line each, for the log

  // The entry for a DCGM name, or nullptr when the file does not serve it.
  const CounterEntry* Find(std::string_view name) const;
  // The catalog metrics the DCGM families need (what the sampler must read).
  std::bitset<kMetricCount> Metrics() const;
};

// Parses counters-file text; `filename` prefixes error messages.
Result<CounterSet> ParseCounters(std::string_view text, std::string_view filename);

// Reads and parses a counters file.
Result<CounterSet> LoadCountersFile(const std::string& path);

// dcgm-exporter's default-counters.csv, byte for byte.
extern const std::string_view kDefaultCountersCsv;

// kDefaultCountersCsv parsed (source "default-counters.csv").
CounterSet DefaultCounterSet();

}  // namespace gpuscope::prom
