// The KPI conventions of docs/app-kpis.md: which OTLP metric names gpuscope
// recognises as application KPIs (training step duration, samples and tokens
// processed, inference request duration, time to first token, time per output
// token; OpenTelemetry's GenAI and HTTP semantic-convention names as they
// are), the family each one is exported as, and the mapping file that renames
// other names to them (a Prometheus-style app metric sent through an OTel SDK).
//
// Every other metric keeps a generic family, gpuscope_app_<name>[_<unit>]
// [_total], so nothing an application sends is dropped for its name.
//
// Mapping file (YAML; errors name file:line):
//   rename:
//     train_step_seconds: training.step.duration
//     request_latency_ms: {to: gen_ai.server.request.duration, unit: ms}
//
// Thread safety: a Conventions is immutable once loaded.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpuscope/status.h"
#include "otlp/model.h"

namespace YAML {
class Node;
}

namespace gpuscope::otlp {

// The KPIs the diagnosis and the dashboards know (kNone: any other metric).
enum class Kpi : uint8_t {
  kNone,
  kStepDuration,        // training step, seconds (histogram)
  kSamples,             // training samples processed (counter)
  kTokens,              // tokens processed or generated (counter)
  kRequestDuration,     // inference/HTTP request, seconds (histogram)
  kTimeToFirstToken,    // seconds (histogram)
  kTimePerOutputToken,  // seconds (histogram)
};

// The family each KPI is exported as. The store reserves these names (and the
// sample names they generate) for the KPIs: no other metric may take them.
struct KpiFamily {
  Kpi kpi;
  std::string_view family;
  Kind kind;
  std::string_view help;
};
std::span<const KpiFamily> KpiFamilies();

// "step_duration", ... (the value of the `kpi` label of gpuscope_app_kpi_*).
std::string_view KpiName(Kpi kpi);
// A higher value is worse (durations), or a lower one (throughput counters).
bool HigherIsWorse(Kpi kpi);

// Where one OTLP metric goes.
struct Naming {
  std::string family;  // Prometheus family name
  Kpi kpi = Kpi::kNone;
  double scale = 1;  // multiplies values (and bucket bounds): ms -> s
  std::string help;
};

class Conventions {
 public:
  Conventions() = default;

  // Parses a mapping file's text; `name` is used in errors ("file:line: ...").
  static Result<Conventions> Parse(std::string_view text, std::string_view name);
  // Reads and parses the mapping file at `path` (base/config_file.h rules).
  static Result<Conventions> Load(const std::string& path);

  // The family for a metric named `name` with OTLP unit `unit` and kind
  // `kind`; nullopt when the name cannot become a Prometheus name (empty).
  std::optional<Naming> Name(std::string_view name, std::string_view unit, Kind kind) const;

  std::size_t renames() const { return renames_.size(); }

 private:
  Status AddRename(const YAML::Node& from, const YAML::Node& to, std::string_view file);

  struct Rename {
    std::string to;
    std::string unit;  // "" keeps the unit the point carries
  };
  std::map<std::string, Rename, std::less<>> renames_;
};

}  // namespace gpuscope::otlp
