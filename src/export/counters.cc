#include "export/counters.h"

#include <algorithm>
#include <unordered_map>

#include "base/config_file.h"
#include "base/text.h"
#include "export/csv_records.h"

namespace gpuscope::prom {
namespace {

// DCGM names are short identifiers; a longer one is refused before any lookup.
constexpr std::size_t kMaxNameLength = 128;

// What is wrong with a field name, checked before the (costlier) lookups.
std::string NameProblem(std::string_view name) {
  if (name.empty()) return "empty field name";
  if (name.size() > kMaxNameLength) {
    return "field name \"" + base::Excerpt(name) + "\" is longer than " +
           std::to_string(kMaxNameLength) + " characters";
  }
  for (char c : name) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) {
      return "field name \"" + base::Excerpt(name) + "\" has characters outside [A-Za-z0-9_]";
    }
  }
  return "";
}

// dcgm-exporter trims spaces (only spaces: a tab stays) around each field.
std::string_view TrimSpaces(std::string_view field) { return base::Trim(field, " "); }

// dcgm-exporter's Prometheus types, spelt in lower case as it requires.
std::optional<CounterType> ParseType(std::string_view text, bool* as_gauge) {
  *as_gauge = false;
  if (text == "gauge") return CounterType::kGauge;
  if (text == "counter") return CounterType::kCounter;
  if (text == "label") return CounterType::kLabel;
  if (text == "histogram" || text == "summary") {
    *as_gauge = true;  // accepted by dcgm-exporter, which then writes a broken family
    return CounterType::kGauge;
  }
  return std::nullopt;
}

std::size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

// The closest served DCGM name, for "did you mean" in an error.
std::string_view ClosestServedName(std::string_view name) {
  std::string_view best;
  std::size_t best_distance = 4;  // suggest only close misspellings
  for (const MetricDef& def : kCatalog) {
    if (def.dcgm.name.empty()) continue;
    std::size_t d = EditDistance(name, def.dcgm.name);
    if (d < best_distance) best = def.dcgm.name, best_distance = d;
  }
  return best;
}

class Parser {
 public:
  explicit Parser(std::string_view filename) { set_.source = std::string(filename); }

  Status Record(const CsvRecord& record);
  CounterSet Take() && { return std::move(set_); }

 private:
  Status Error(int line, const std::string& problem) const {
    return Status::InvalidArgument(set_.source + ":" + std::to_string(line) + ": " + problem);
  }
  void Warn(int line, const std::string& problem) {
    set_.warnings.push_back(set_.source + ":" + std::to_string(line) + ": " + problem);
  }
  Status Resolve(CounterEntry& entry, std::string_view type_text);
  void ResolveMetric(CounterEntry& entry, Metric metric);
  void ResolveLabel(CounterEntry& entry, LabelField field);

  CounterSet set_;
  std::unordered_map<std::string, int> first_line_;
};

// Why a record is not FIELD, type, help, with a hint for the two look-alikes
// that dcgm-exporter reads as records: an indented comment, a line of spaces.
std::string FieldCountProblem(const CsvRecord& record) {
  std::string problem =
      "expected 3 fields (FIELD, type, help), got " + std::to_string(record.fields.size());
  std::string_view first = TrimSpaces(record.fields[0]);
  if (record.fields.size() == 1 && first.empty()) {
    problem += " (a line of spaces is a record to dcgm-exporter; remove it)";
  } else if (!first.empty() && first[0] == '#') {
    problem += " (a comment starts with # in the first column, as dcgm-exporter requires)";
  }
  return problem;
}

Status Parser::Record(const CsvRecord& record) {
  if (record.fields.size() != 3) return Error(record.line, FieldCountProblem(record));
  CounterEntry entry;
  entry.name = std::string(TrimSpaces(record.fields[0]));
  entry.help = std::string(TrimSpaces(record.fields[2]));
  entry.line = record.line;
  if (std::string problem = NameProblem(entry.name); !problem.empty()) {
    return Error(record.line, problem);
  }
  // dcgm-exporter takes any help; gpuscope refuses text that would corrupt the
  // exposition or a terminal (the one place it is stricter).
  if (std::string problem = base::TextProblem(entry.help); !problem.empty()) {
    return Error(record.line, "help text of " + entry.name + " " + problem);
  }
  return Resolve(entry, TrimSpaces(record.fields[1]));
}

Status Parser::Resolve(CounterEntry& entry, std::string_view type_text) {
  // DCGM_EXP_* families: dcgm-exporter does not check their type.
  if (IsExporterField(entry.name)) {
    if (!IsServedExporterField(entry.name)) {
      Warn(entry.line, entry.name + " is not available without DCGM; skipped");
      return Status::Ok();
    }
    entry.kind = CounterKind::kExporter;
    entry.type = type_text == "gauge" ? CounterType::kGauge : CounterType::kCounter;
    set_.entries.push_back(std::move(entry));
    return Status::Ok();
  }
  std::optional<Metric> metric = FindByDcgmName(CanonicalDcgmName(entry.name));
  std::optional<LabelField> label = FindLabelField(CanonicalDcgmName(entry.name));
  if (!metric && !label && !IsKnownUnsupportedField(CanonicalDcgmName(entry.name))) {
    std::string problem = entry.name + " is not a DCGM field";
    if (std::string_view guess = ClosestServedName(entry.name); !guess.empty()) {
      problem += " (did you mean " + std::string(guess) + "?)";
    }
    return Error(entry.line, problem);
  }
  bool as_gauge = false;
  std::optional<CounterType> type = ParseType(type_text, &as_gauge);
  if (!type) {
    return Error(entry.line, "unknown type \"" + base::Excerpt(type_text) + "\" for " + entry.name +
                                 " (want gauge, counter or label, in lower case)");
  }
  entry.type = *type;
  auto [it, inserted] = first_line_.emplace(entry.name, entry.line);
  if (!inserted) {
    Warn(entry.line, entry.name + " is listed again (first on line " + std::to_string(it->second) +
                         "); dcgm-exporter accepts that, gpuscope serves the first entry only");
    return Status::Ok();
  }
  if (as_gauge) {
    Warn(entry.line, entry.name + ": type " + std::string(type_text) +
                         " is accepted as dcgm-exporter does, and served as a gauge");
  }
  if (metric) {
    ResolveMetric(entry, *metric);
  } else if (label) {
    ResolveLabel(entry, *label);
  } else if (!IsRenderedVgpuField(entry.name)) {
    Warn(entry.line, entry.name + " is not available without DCGM; skipped");
  }
  return Status::Ok();
}

void Parser::ResolveMetric(CounterEntry& entry, Metric metric) {
  if (entry.type == CounterType::kLabel) {
    Warn(entry.line, entry.name +
                         " is a numeric field declared label; dcgm-exporter accepts it, gpuscope "
                         "skips it (declare it gauge or counter)");
    return;
  }
  entry.kind = CounterKind::kMetric;
  entry.metric = metric;
  if (entry.help.empty()) entry.help = std::string(Def(metric).help);
  set_.entries.push_back(std::move(entry));
}

void Parser::ResolveLabel(CounterEntry& entry, LabelField field) {
  if (entry.type != CounterType::kLabel) {
    Warn(entry.line, entry.name + " is a string field declared " +
                         std::string(entry.type == CounterType::kCounter ? "counter" : "gauge") +
                         "; dcgm-exporter would write its text as a sample value, gpuscope "
                         "skips it (declare it label)");
    return;
  }
  entry.kind = CounterKind::kLabel;
  entry.label_field = field;
  set_.entries.push_back(std::move(entry));
}

}  // namespace

const CounterEntry* CounterSet::Find(std::string_view name) const {
  for (const CounterEntry& entry : entries) {
    if (entry.name == name) return &entry;
  }
  return nullptr;
}

std::bitset<kMetricCount> CounterSet::Metrics() const {
  std::bitset<kMetricCount> metrics;
  for (const CounterEntry& entry : entries) {
    if (entry.kind == CounterKind::kMetric) metrics.set(Index(entry.metric));
  }
  return metrics;
}

Result<CounterSet> ParseCounters(std::string_view text, std::string_view filename) {
  Result<std::vector<CsvRecord>> records = ReadCsvRecords(text, filename);
  if (!records.ok()) return records.status();
  Parser parser(filename);
  for (const CsvRecord& record : *records) GPUSCOPE_RETURN_IF_ERROR(parser.Record(record));
  CounterSet set = std::move(parser).Take();
  // Fail closed: a file that lists nothing would silently drop every DCGM family.
  if (set.entries.empty() && set.warnings.empty()) {
    return Status::InvalidArgument(set.source + ": lists no fields (FIELD, type, help)");
  }
  return set;
}

Result<CounterSet> LoadCountersFile(const std::string& path) {
  Result<std::string> text = base::ReadConfigFile(path, "counters file");
  if (!text.ok()) return text.status();
  return ParseCounters(*text, path);
}

CounterSet DefaultCounterSet() {
  Result<CounterSet> set = ParseCounters(kDefaultCountersCsv, "default-counters.csv");
  return set.ok() ? std::move(set).value() : CounterSet{};
}

}  // namespace gpuscope::prom
