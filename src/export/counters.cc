#include "export/counters.h"

#include <algorithm>
#include <unordered_map>

#include "base/config_file.h"
#include "base/text.h"

namespace gpuscope::prom {
namespace {

constexpr std::string_view kBlank = " \t\r\v\f";

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

std::string_view Trim(std::string_view s) {
  std::size_t begin = s.find_first_not_of(kBlank);
  if (begin == std::string_view::npos) return {};
  std::size_t end = s.find_last_not_of(kBlank);
  return s.substr(begin, end - begin + 1);
}

// Splits one record on commas; a field may be double-quoted ("" is a quote).
Result<std::vector<std::string>> SplitRecord(std::string_view line) {
  std::vector<std::string> fields;
  std::size_t i = 0;
  while (true) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    std::string field;
    if (i < line.size() && line[i] == '"') {
      ++i;
      bool closed = false;
      for (; i < line.size(); ++i) {
        if (line[i] != '"') {
          field += line[i];
        } else if (i + 1 < line.size() && line[i + 1] == '"') {
          field += '"';
          ++i;
        } else {
          closed = true;
          ++i;
          break;
        }
      }
      if (!closed) return Status::InvalidArgument("unterminated quoted field");
      std::size_t next = line.find(',', i);
      std::string_view rest = line.substr(i, next == std::string_view::npos ? line.npos : next - i);
      if (!Trim(rest).empty()) return Status::InvalidArgument("text after a quoted field");
      i = next;
    } else {
      std::size_t next = line.find(',', i);
      field =
          std::string(Trim(line.substr(i, next == std::string_view::npos ? line.npos : next - i)));
      i = next;
    }
    fields.push_back(std::move(field));
    if (i == std::string_view::npos) return fields;
    ++i;  // past the comma
  }
}

std::optional<CounterType> ParseType(std::string_view text) {
  std::string lower(text);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "gauge") return CounterType::kGauge;
  if (lower == "counter") return CounterType::kCounter;
  if (lower == "label") return CounterType::kLabel;
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

  Status Line(std::string_view raw, int number);
  CounterSet Take() && { return std::move(set_); }

 private:
  Status Error(int line, const std::string& problem) const {
    return Status::InvalidArgument(set_.source + ":" + std::to_string(line) + ": " + problem);
  }
  Status Resolve(CounterEntry& entry);
  Status ResolveMetric(CounterEntry& entry, Metric metric);

  CounterSet set_;
  std::unordered_map<std::string, int> first_line_;
};

Status Parser::Line(std::string_view raw, int number) {
  std::string_view line = Trim(raw);
  if (line.empty() || line[0] == '#') return Status::Ok();
  Result<std::vector<std::string>> fields = SplitRecord(line);
  if (!fields.ok()) return Error(number, fields.status().message());
  if (fields->size() != 3) {
    return Error(number,
                 "expected 3 fields (FIELD, type, help), got " + std::to_string(fields->size()));
  }
  CounterEntry entry;
  entry.name = (*fields)[0];
  entry.help = (*fields)[2];
  entry.line = number;
  if (std::string problem = NameProblem(entry.name); !problem.empty()) {
    return Error(number, problem);
  }
  if (std::string problem = base::TextProblem(entry.help); !problem.empty()) {
    return Error(number, "help text of " + entry.name + " " + problem);
  }
  std::optional<CounterType> type = ParseType((*fields)[1]);
  if (!type) {
    return Error(number, "unknown type \"" + base::Excerpt((*fields)[1]) + "\" for " + entry.name +
                             " (want gauge, counter or label)");
  }
  entry.type = *type;
  return Resolve(entry);
}

Status Parser::Resolve(CounterEntry& entry) {
  auto [it, inserted] = first_line_.emplace(entry.name, entry.line);
  if (!inserted) {
    return Error(entry.line, entry.name + " is listed twice (first on line " +
                                 std::to_string(it->second) + ")");
  }
  if (std::optional<Metric> metric = FindByDcgmName(entry.name)) {
    return ResolveMetric(entry, *metric);
  }
  if (std::optional<LabelField> field = FindLabelField(entry.name)) {
    if (entry.type != CounterType::kLabel) {
      return Error(entry.line, entry.name + " is a string field; its type must be label");
    }
    entry.kind = CounterKind::kLabel;
    entry.label_field = *field;
    set_.entries.push_back(std::move(entry));
    return Status::Ok();
  }
  if (IsServedExporterField(entry.name)) {
    if (entry.type == CounterType::kLabel) {
      return Error(entry.line, entry.name + " is a numeric field; use gauge or counter");
    }
    entry.kind = CounterKind::kExporter;
    set_.entries.push_back(std::move(entry));
    return Status::Ok();
  }
  if (IsKnownUnsupportedField(entry.name)) {
    set_.warnings.push_back(set_.source + ":" + std::to_string(entry.line) + ": " + entry.name +
                            " is not available without DCGM; skipped");
    return Status::Ok();
  }
  std::string problem = entry.name + " is not a DCGM field";
  if (std::string_view guess = ClosestServedName(entry.name); !guess.empty()) {
    problem += " (did you mean " + std::string(guess) + "?)";
  }
  return Error(entry.line, problem);
}

Status Parser::ResolveMetric(CounterEntry& entry, Metric metric) {
  if (entry.type == CounterType::kLabel) {
    return Error(entry.line, entry.name + " is a numeric field; use gauge or counter");
  }
  entry.kind = CounterKind::kMetric;
  entry.metric = metric;
  if (entry.help.empty()) entry.help = std::string(Def(metric).help);
  set_.entries.push_back(std::move(entry));
  return Status::Ok();
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
  Parser parser(filename);
  int number = 0;
  while (!text.empty()) {
    std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    GPUSCOPE_RETURN_IF_ERROR(parser.Line(line, ++number));
  }
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
