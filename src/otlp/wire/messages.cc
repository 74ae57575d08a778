#include "otlp/wire/messages.h"

#include <google/protobuf/stubs/logging.h>
#include <google/protobuf/util/json_util.h>

#include <algorithm>
#include <charconv>
#include <mutex>

#include "base/log.h"
#include "otlp/otlp_metrics.pb.h"

namespace gpuscope::otlp {
namespace {

std::string AnyText(const pb::AnyValue& v);

std::string ListText(const google::protobuf::RepeatedPtrField<pb::AnyValue>& values) {
  std::string out = "[";
  for (int i = 0; i < values.size(); ++i) {
    if (i) out += ',';
    out += AnyText(values[i]);
  }
  out += ']';
  return out;
}

std::string AnyText(const pb::AnyValue& v) {
  switch (v.value_case()) {
    case pb::AnyValue::kStringValue:
      return v.string_value();
    case pb::AnyValue::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case pb::AnyValue::kIntValue:
      return std::to_string(v.int_value());
    case pb::AnyValue::kDoubleValue: {
      char buffer[32];
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, v.double_value());
      return ec == std::errc() ? std::string(buffer, end) : "";
    }
    case pb::AnyValue::kArrayValue:
      return ListText(v.array_value().values());
    case pb::AnyValue::kKvlistValue: {
      std::string out = "{";
      for (int i = 0; i < v.kvlist_value().values_size(); ++i) {
        const pb::KeyValue& kv = v.kvlist_value().values(i);
        if (i) out += ',';
        out.append(kv.key()).append("=").append(AnyText(kv.value()));
      }
      out += '}';
      return out;
    }
    case pb::AnyValue::kBytesValue: {
      // Appended, not "(" + std::string: GCC 12 at -O3 warns falsely on that (-Wrestrict).
      std::string out = "(";
      return out.append(std::to_string(v.bytes_value().size())).append(" bytes)");
    }
    case pb::AnyValue::VALUE_NOT_SET:
      break;
  }
  return "";
}

// Labels the exporter sets itself; an attribute of the same name is renamed.
bool Reserved(std::string_view name) {
  for (std::string_view r : {"gpu", "UUID", "workload", "namespace", "pod", "service",
                             "service_instance_id", "process_pid", "host_name", "le", "kpi"}) {
    if (name == r) return true;
  }
  return false;
}

std::string LabelName(std::string_view key) {
  std::string out;
  for (char c : key) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out.push_back(ok ? c : '_');
  }
  if (out.empty() || (out[0] >= '0' && out[0] <= '9')) out.insert(0, "key_");
  if (out.starts_with("__")) out.insert(0, "key");
  if (Reserved(out)) out.insert(0, "exported_");
  return out;
}

Labels ToLabels(const google::protobuf::RepeatedPtrField<pb::KeyValue>& attributes) {
  Labels out;
  out.reserve(attributes.size());
  for (const pb::KeyValue& kv : attributes)
    out.emplace_back(LabelName(kv.key()), AnyText(kv.value()));
  std::sort(out.begin(), out.end());
  // Two keys that sanitize alike ("a.b", "a_b"): the first wins.
  out.erase(std::unique(out.begin(), out.end(),
                        [](const auto& a, const auto& b) { return a.first == b.first; }),
            out.end());
  return out;
}

Origin OriginOf(const pb::Resource& resource) {
  Origin o;
  for (const pb::KeyValue& kv : resource.attributes()) {
    const std::string& k = kv.key();
    std::string* field = k == "process.pid"           ? &o.pid
                         : k == "k8s.pod.name"        ? &o.pod
                         : k == "k8s.namespace.name"  ? &o.namespace_name
                         : k == "service.name"        ? &o.service
                         : k == "service.instance.id" ? &o.service_instance
                         : k == "host.name"           ? &o.host
                                                      : nullptr;
    if (field != nullptr) *field = AnyText(kv.value());
  }
  return o;
}

struct Converter {
  const Namer& name;
  Batch& batch;
  uint32_t origin = 0;

  void Reject(uint64_t points, std::string why) {
    batch.rejected += points;
    if (batch.problem.empty()) batch.problem = std::move(why);
  }

  void Numbers(const pb::Metric& m,
               const google::protobuf::RepeatedPtrField<pb::NumberDataPoint>& dps, Kind kind,
               bool delta) {
    std::optional<Naming> naming = name(m.name(), m.unit(), kind);
    if (!naming) return Reject(dps.size(), "a metric has no usable name");
    for (const pb::NumberDataPoint& dp : dps) {
      if (dp.flags() & 1) continue;  // no recorded value: a staleness marker, nothing to keep
      Point p{origin, *naming, kind, delta, ToLabels(dp.attributes())};
      p.value = dp.value_case() == pb::NumberDataPoint::kAsInt ? static_cast<double>(dp.as_int())
                                                               : dp.as_double();
      p.value *= naming->scale;
      batch.points.push_back(std::move(p));
    }
  }

  void Histograms(const pb::Metric& m, const pb::Histogram& h) {
    std::optional<Naming> naming = name(m.name(), m.unit(), Kind::kHistogram);
    if (!naming) return Reject(h.data_points_size(), "a metric has no usable name");
    const bool delta = h.aggregation_temporality() == pb::AGGREGATION_TEMPORALITY_DELTA;
    for (const pb::HistogramDataPoint& dp : h.data_points()) {
      if (dp.flags() & 1) continue;
      const bool increasing =
          std::adjacent_find(dp.explicit_bounds().begin(), dp.explicit_bounds().end(),
                             [](double a, double b) { return !(a < b); }) ==
          dp.explicit_bounds().end();
      if (dp.bucket_counts_size() != dp.explicit_bounds_size() + 1 || !increasing) {
        Reject(1, "histogram '" + m.name() + "' has " + std::to_string(dp.bucket_counts_size()) +
                      " bucket counts for " + std::to_string(dp.explicit_bounds_size()) +
                      " bounds (needs bounds + 1, bounds strictly increasing)");
        continue;
      }
      Point p{origin, *naming, Kind::kHistogram, delta, ToLabels(dp.attributes())};
      for (double b : dp.explicit_bounds()) p.histogram.bounds.push_back(b * naming->scale);
      p.histogram.counts.assign(dp.bucket_counts().begin(), dp.bucket_counts().end());
      p.histogram.count = dp.count();
      p.histogram.sum = dp.has_sum() ? dp.sum() * naming->scale : 0;
      batch.points.push_back(std::move(p));
    }
  }

  void Metric(const pb::Metric& m) {
    switch (m.data_case()) {
      case pb::Metric::kGauge:
        return Numbers(m, m.gauge().data_points(), Kind::kGauge, false);
      case pb::Metric::kSum: {
        const pb::Sum& s = m.sum();
        const bool delta = s.aggregation_temporality() == pb::AGGREGATION_TEMPORALITY_DELTA;
        if (s.is_monotonic()) return Numbers(m, s.data_points(), Kind::kCounter, delta);
        // A non-monotonic delta sum has no running total worth keeping: its last value.
        return Numbers(m, s.data_points(), Kind::kGauge, false);
      }
      case pb::Metric::kHistogram:
        return Histograms(m, m.histogram());
      case pb::Metric::kExponentialHistogram:
        return Reject(m.exponential_histogram().data_points_size(),
                      "metric '" + m.name() +
                          "' is an exponential histogram, which gpuscope does not keep yet "
                          "(configure the SDK's explicit-bucket histogram aggregation)");
      case pb::Metric::kSummary:
        return Reject(m.summary().data_points_size(),
                      "metric '" + m.name() +
                          "' is a Summary, which gpuscope does not keep "
                          "(send a histogram)");
      case pb::Metric::DATA_NOT_SET:
        return;  // no points
    }
  }
};

// libprotobuf writes to stderr for every string with invalid UTF-8 it parses: anyone who can
// post would fill the agent's log. The request is already answered 400 with the reason.
void ProtobufToDebugLog(google::protobuf::LogLevel level, const char* file, int line,
                        const std::string& message) {
  if (level >= google::protobuf::LOGLEVEL_FATAL) {
    log::Critical("otlp: libprotobuf {}:{}: {}", file, line, message);
  } else {
    log::Debug("otlp: libprotobuf: {}", message);
  }
}

}  // namespace

void QuietProtobufLog() {
  static std::once_flag once;
  std::call_once(once, [] { google::protobuf::SetLogHandler(&ProtobufToDebugLog); });
}

std::optional<Failure> ParseRequest(std::string_view bytes, Encoding encoding,
                                    pb::ExportMetricsServiceRequest* out) {
  QuietProtobufLog();
  if (encoding == Encoding::kProtobuf) {
    if (out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return std::nullopt;
    return Failure{400,
                   "the body is not a valid protobuf ExportMetricsServiceRequest "
                   "(truncated or corrupt, " +
                       std::to_string(bytes.size()) + " bytes)"};
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // OTLP/JSON receivers must ignore unknown fields
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(bytes.data(), bytes.size()), out, options);
  if (status.ok()) return std::nullopt;
  return Failure{400, "the body is not a valid JSON ExportMetricsServiceRequest: " +
                          std::string(status.message())};
}

uint64_t CountPoints(const pb::ExportMetricsServiceRequest& request) {
  uint64_t n = 0;
  for (const pb::ResourceMetrics& rm : request.resource_metrics()) {
    for (const pb::ScopeMetrics& sm : rm.scope_metrics()) {
      for (const pb::Metric& m : sm.metrics()) {
        switch (m.data_case()) {
          case pb::Metric::kGauge:
            n += m.gauge().data_points_size();
            break;
          case pb::Metric::kSum:
            n += m.sum().data_points_size();
            break;
          case pb::Metric::kHistogram:
            n += m.histogram().data_points_size();
            break;
          case pb::Metric::kExponentialHistogram:
            n += m.exponential_histogram().data_points_size();
            break;
          case pb::Metric::kSummary:
            n += m.summary().data_points_size();
            break;
          case pb::Metric::DATA_NOT_SET:
            break;
        }
      }
    }
  }
  return n;
}

Batch ToBatch(const pb::ExportMetricsServiceRequest& request, const Namer& name) {
  Batch batch;
  Converter converter{name, batch};
  for (const pb::ResourceMetrics& rm : request.resource_metrics()) {
    Origin origin = OriginOf(rm.resource());
    auto it = std::find(batch.origins.begin(), batch.origins.end(), origin);
    converter.origin = static_cast<uint32_t>(it - batch.origins.begin());
    if (it == batch.origins.end()) batch.origins.push_back(std::move(origin));
    for (const pb::ScopeMetrics& sm : rm.scope_metrics()) {
      for (const pb::Metric& m : sm.metrics()) converter.Metric(m);
    }
  }
  return batch;
}

}  // namespace gpuscope::otlp
