// dcgm-exporter's counters file (`-f`): which DCGM-named families gpuscope
// serves, with their Prometheus type and help, and which string fields become
// labels on every DCGM series. The files dcgm-exporter ships parse unchanged.
//
// Format: one `FIELD, type, help` record per line; a line whose first
// non-blank character is `#` is a comment; blank lines are skipped; CR before
// LF is ignored; whitespace around each field is trimmed; a field may be
// double-quoted (`""` inside quotes is a quote), so a help text can hold
// commas. Exactly 3 fields. The type is `gauge`, `counter` or `label`
// (case-insensitive).
//
// Names are resolved in this order (the rule, precisely):
//   1. a catalog dcgm name (catalog.h)          -> served metric (gauge/counter)
//   2. a label field (dcgm_fields.h)             -> label on every series (type label)
//   3. DCGM_EXP_XID_ERRORS_COUNT / _CLOCK_EVENTS_COUNT -> kept as an exporter
//      entry; the module owning it renders it through the Family API
//   4. a real DCGM/DCGM_EXP name gpuscope cannot serve (vGPU, inforom, per-link
//      fields, ...) -> skipped, one warning per name in CounterSet::warnings
//   5. anything else                             -> error `<file>:<line>: ...`
// Also errors: a wrong field count, an unknown type, an empty name, a served
// name listed twice, a string field declared gauge/counter, a numeric field
// declared label. The file's type and help win over the catalog's (as in
// dcgm-exporter); an empty help falls back to the catalog's.
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
