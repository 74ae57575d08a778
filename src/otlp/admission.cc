#include "otlp/admission.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "base/text.h"
#include "export/writer.h"

namespace gpuscope::otlp {
namespace {

// The resource attributes the store keeps, with the label each becomes.
std::array<std::pair<std::string_view, const std::string*>, 6> OriginFields(const Origin& o) {
  return {{{"process.pid", &o.pid},
           {"k8s.pod.name", &o.pod},
           {"k8s.namespace.name", &o.namespace_name},
           {"service.name", &o.service},
           {"service.instance.id", &o.service_instance},
           {"host.name", &o.host}}};
}

// The bytes `v` takes once escaped as a label value (export/writer.h): `\`,
// `"` and newline take two, other control characters and bytes that are not
// UTF-8 become U+FFFD (three).
std::size_t EscapedSize(std::string_view v) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < v.size();) {
    const auto c = static_cast<unsigned char>(v[i]);
    std::size_t length = 1, size = 1;
    if (c == '\\' || c == '"' || c == '\n') {
      size = 2;
    } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
      size = 3;
    } else if (c >= 0x80) {
      length = std::max<std::size_t>(1, base::Utf8SequenceLength(v, i));
      size = length == 1 ? 3 : length;
    }
    n += size;
    i += length;
  }
  return n;
}

std::string TooLong(std::string_view what, std::size_t size, std::size_t limit) {
  return std::string(what) + " has " + std::to_string(size) + " bytes, over the limit of " +
         std::to_string(limit);
}

Status CheckLabels(const Point& p, const Origin& origin, const PointLimits& limits) {
  const std::string& family = p.naming.family;
  if (family.size() > limits.max_family_name_bytes) {
    return Status::InvalidArgument(TooLong("the family name '" + base::Excerpt(family) + "'",
                                           family.size(), limits.max_family_name_bytes));
  }
  if (p.naming.help.size() > limits.max_help_bytes) {
    return Status::InvalidArgument(TooLong("the help text of '" + family +
                                               "' (it holds the OTLP metric name, which "
                                               "OpenTelemetry limits to 255 characters)",
                                           p.naming.help.size(), limits.max_help_bytes));
  }
  if (p.labels.size() > limits.max_labels) {
    return Status::InvalidArgument(
        "a point of '" + family + "' has " + std::to_string(p.labels.size()) +
        " attributes, over the limit of " + std::to_string(limits.max_labels));
  }
  for (const auto& [name, value] : p.labels) {
    if (name.size() > limits.max_label_name_bytes) {
      return Status::InvalidArgument(
          TooLong("an attribute key of '" + family + "' ('" + base::Excerpt(name) + "')",
                  name.size(), limits.max_label_name_bytes));
    }
    if (value.size() > limits.max_label_value_bytes) {
      return Status::InvalidArgument(
          TooLong("the value of attribute '" + base::Excerpt(name) + "' of '" + family + "'",
                  value.size(), limits.max_label_value_bytes));
    }
  }
  for (const auto& [key, value] : OriginFields(origin)) {
    if (value->size() > limits.max_label_value_bytes) {
      return Status::InvalidArgument(TooLong("the resource attribute " + std::string(key),
                                             value->size(), limits.max_label_value_bytes));
    }
  }
  return Status::Ok();
}

// The +Inf bucket is implicit, the cumulative buckets end at `count`, and the
// sum is a number: what Prometheus' histogram_quantile and rate() rely on.
Status CheckHistogram(const std::string& family, const HistogramValue& h) {
  for (double bound : h.bounds) {
    if (!std::isfinite(bound)) {
      return Status::InvalidArgument("histogram '" + family +
                                     "' has a non-finite bucket bound (the +Inf bucket is "
                                     "implicit: send only finite bounds)");
    }
  }
  uint64_t total = 0;
  for (uint64_t c : h.counts) {
    if (__builtin_add_overflow(total, c, &total)) {
      return Status::InvalidArgument("histogram '" + family + "' has bucket counts that overflow");
    }
  }
  if (total != h.count) {
    return Status::InvalidArgument("histogram '" + family + "' has count " +
                                   std::to_string(h.count) + " but its buckets add up to " +
                                   std::to_string(total));
  }
  if (!std::isfinite(h.sum)) {
    return Status::InvalidArgument("histogram '" + family + "' has a non-finite sum");
  }
  return Status::Ok();
}

}  // namespace

Status CheckPoint(const Point& p, const Origin& origin, const PointLimits& limits) {
  GPUSCOPE_RETURN_IF_ERROR(CheckLabels(p, origin, limits));
  if (p.kind == Kind::kHistogram) return CheckHistogram(p.naming.family, p.histogram);
  if (p.kind == Kind::kCounter && !(std::isfinite(p.value) && p.value >= 0)) {
    std::string value;
    prom::AppendValue(p.value, &value);
    return Status::InvalidArgument("counter '" + p.naming.family + "' has the value " + value +
                                   " (a monotonic sum must be finite and not negative)");
  }
  return Status::Ok();
}

std::size_t SeriesCost(std::string_view family, Kind kind, const Origin& origin,
                       const Labels& labels, std::size_t bounds) {
  constexpr std::size_t kTargetLabels = 64;  // gpu="..",UUID="GPU-<36 characters>"
  constexpr std::size_t kOriginLabel = 24;   // `service_instance_id="",` at most
  constexpr std::size_t kLine = 8 + 3 + 32;  // suffix (_bucket), `{} `, a value, newline
  constexpr std::size_t kLe = 32;            // `,le="<bound>"` on a bucket line
  constexpr std::size_t kOverhead = 256;     // map node, key and vector headers
  constexpr std::size_t kBucketMemory = 16;  // a bound and a count
  std::size_t label_bytes = kTargetLabels;
  for (const auto& [key, value] : OriginFields(origin)) {
    if (!value->empty()) label_bytes += kOriginLabel + EscapedSize(*value);
  }
  for (const auto& [name, value] : labels) label_bytes += name.size() + EscapedSize(value) + 4;
  const bool histogram = kind == Kind::kHistogram;
  const std::size_t buckets = histogram ? bounds + 1 : 0;
  const std::size_t lines = histogram ? buckets + 2 : 1;
  const std::size_t rendered = lines * (family.size() + label_bytes + kLine) + buckets * kLe;
  const std::size_t memory = kOverhead + 2 * label_bytes + buckets * kBucketMemory;
  return rendered + memory;
}

std::vector<std::string> Claims(std::string_view name, Kind kind) {
  const std::string n(name);
  switch (kind) {
    case Kind::kGauge:
      break;
    case Kind::kCounter:
      if (name.ends_with("_total")) {
        const std::string stem(name.substr(0, name.size() - 6));
        return {n, stem, stem + "_created"};
      }
      return {n, n + "_created"};
    case Kind::kHistogram:
      return {n, n + "_bucket", n + "_count", n + "_sum", n + "_created"};
  }
  return {n};
}

}  // namespace gpuscope::otlp
