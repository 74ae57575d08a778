// What the OTLP store admits (docs/app-kpis.md, "Limits"; docs/security.md):
// - CheckPoint: a point /metrics could not carry as valid exposition (a
//   negative or non-finite counter, a histogram with a non-finite bound or a
//   count other than its buckets' total) or over the label limits (names,
//   values, attributes per point, family name length) is refused with a
//   message that names the problem;
// - SeriesCost: the bytes one series is charged against the store's byte
//   budgets, an upper estimate of what it holds in memory plus what its lines
//   take in /metrics, escaped (before attribution repeats them per GPU; an
//   unattributed series' lines never take more);
// - Claims: every name a family takes in the exposition (its samples' names
//   and the family names of the text format and OpenMetrics), so two families
//   that would write the same sample or header name can be told apart.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"
#include "otlp/decode.h"
#include "otlp/model.h"

namespace gpuscope::otlp {

struct PointLimits {
  // A label name (an attribute key after sanitizing), bytes (default 128).
  std::size_t max_label_name_bytes = 128;
  // A label value (a point attribute or a resource attribute the store
  // keeps), bytes (default 1024; Mimir's default is 2048, Prometheus has none).
  std::size_t max_label_value_bytes = 1024;
  // A point's own attributes (default 24; the store adds up to 9 of its own).
  std::size_t max_labels = 24;
  // The exported family name, bytes (default 300: an OTLP name of 255, the
  // OpenTelemetry API's instrument-name limit, with gpuscope_app_ and suffixes).
  std::size_t max_family_name_bytes = 300;
  // The family's help text, which quotes the OTLP metric name (default 512).
  std::size_t max_help_bytes = 512;
};

// Ok, or why `point` (sent by `origin`) cannot be kept as it is.
Status CheckPoint(const Point& point, const Origin& origin, const PointLimits& limits);

// The bytes a series of family `family` with these labels and `bounds`
// histogram bounds (0 for gauges and counters) is charged.
std::size_t SeriesCost(std::string_view family, Kind kind, const Origin& origin,
                       const Labels& labels, std::size_t bounds);

// The names a family `name` of `kind` takes in /metrics: a gauge its name; a
// counter `x_total` also `x` (its OpenMetrics family) and `x_created`; a
// histogram `x` also `x_bucket`, `x_count`, `x_sum` and `x_created`.
std::vector<std::string> Claims(std::string_view name, Kind kind);

}  // namespace gpuscope::otlp
