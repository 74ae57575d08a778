#include "otlp/prescan.h"

#include <string>

namespace gpuscope::otlp {
namespace {

// `setting`: the serve setting that raises the limit, "" when fixed.
std::optional<Failure> TooMany(const std::string& what, uint64_t limit,
                               std::string_view setting = "") {
  const std::string named = setting.empty() ? "" : " (" + std::string(setting) + ")";
  return Failure{413, "the request has more than " + std::to_string(limit) + " " + what +
                          ", the receiver's limit per request" + named + "; send smaller batches"};
}

constexpr std::string_view kPointsSetting = "otlp-max-points-per-request";
constexpr std::string_view kElementsSetting = "otlp-max-elements-per-request";

enum class Msg : uint8_t {
  kRequest,
  kResourceMetrics,
  kResource,
  kScopeMetrics,
  kScope,
  kMetric,
  kGauge,
  kSum,
  kHistogram,
  kExpHistogram,
  kSummary,
  kNumberPoint,
  kHistogramPoint,
  kExpPoint,
  kSummaryPoint,
  kKeyValue,
  kAnyValue,
  kArray,
  kKvList,
};

// How a known field is encoded. Singular scalars cost nothing extra when repeated (the parser
// keeps the last); everything else adds to the parsed message.
enum class Kind : uint8_t { kVarint, kFixed64, kBytes, kMessage, kBuckets, kBounds };

struct Field {
  Msg in;
  uint32_t number;
  Kind kind;
  Msg child = Msg::kRequest;  // kMessage only
};

// otlp_metrics.proto, field by field; a field not listed is kept by libprotobuf as unknown.
constexpr Field kFields[] = {
    {Msg::kRequest, 1, Kind::kMessage, Msg::kResourceMetrics},
    {Msg::kResourceMetrics, 1, Kind::kMessage, Msg::kResource},
    {Msg::kResourceMetrics, 2, Kind::kMessage, Msg::kScopeMetrics},
    {Msg::kResourceMetrics, 3, Kind::kBytes},
    {Msg::kResource, 1, Kind::kMessage, Msg::kKeyValue},
    {Msg::kResource, 2, Kind::kVarint},
    {Msg::kScopeMetrics, 1, Kind::kMessage, Msg::kScope},
    {Msg::kScopeMetrics, 2, Kind::kMessage, Msg::kMetric},
    {Msg::kScopeMetrics, 3, Kind::kBytes},
    {Msg::kScope, 1, Kind::kBytes},
    {Msg::kScope, 2, Kind::kBytes},
    {Msg::kMetric, 1, Kind::kBytes},
    {Msg::kMetric, 2, Kind::kBytes},
    {Msg::kMetric, 3, Kind::kBytes},
    {Msg::kMetric, 5, Kind::kMessage, Msg::kGauge},
    {Msg::kMetric, 7, Kind::kMessage, Msg::kSum},
    {Msg::kMetric, 9, Kind::kMessage, Msg::kHistogram},
    {Msg::kMetric, 10, Kind::kMessage, Msg::kExpHistogram},
    {Msg::kMetric, 11, Kind::kMessage, Msg::kSummary},
    {Msg::kGauge, 1, Kind::kMessage, Msg::kNumberPoint},
    {Msg::kSum, 1, Kind::kMessage, Msg::kNumberPoint},
    {Msg::kSum, 2, Kind::kVarint},
    {Msg::kSum, 3, Kind::kVarint},
    {Msg::kHistogram, 1, Kind::kMessage, Msg::kHistogramPoint},
    {Msg::kHistogram, 2, Kind::kVarint},
    {Msg::kExpHistogram, 1, Kind::kMessage, Msg::kExpPoint},
    {Msg::kExpHistogram, 2, Kind::kVarint},
    {Msg::kSummary, 1, Kind::kMessage, Msg::kSummaryPoint},
    {Msg::kNumberPoint, 7, Kind::kMessage, Msg::kKeyValue},
    {Msg::kNumberPoint, 2, Kind::kFixed64},
    {Msg::kNumberPoint, 3, Kind::kFixed64},
    {Msg::kNumberPoint, 4, Kind::kFixed64},
    {Msg::kNumberPoint, 6, Kind::kFixed64},
    {Msg::kNumberPoint, 8, Kind::kVarint},
    {Msg::kHistogramPoint, 9, Kind::kMessage, Msg::kKeyValue},
    {Msg::kHistogramPoint, 2, Kind::kFixed64},
    {Msg::kHistogramPoint, 3, Kind::kFixed64},
    {Msg::kHistogramPoint, 4, Kind::kFixed64},
    {Msg::kHistogramPoint, 5, Kind::kFixed64},
    {Msg::kHistogramPoint, 6, Kind::kBuckets},
    {Msg::kHistogramPoint, 7, Kind::kBounds},
    {Msg::kHistogramPoint, 10, Kind::kVarint},
    {Msg::kHistogramPoint, 11, Kind::kFixed64},
    {Msg::kHistogramPoint, 12, Kind::kFixed64},
    {Msg::kExpPoint, 1, Kind::kMessage, Msg::kKeyValue},
    {Msg::kExpPoint, 2, Kind::kFixed64},
    {Msg::kExpPoint, 3, Kind::kFixed64},
    {Msg::kExpPoint, 4, Kind::kFixed64},
    {Msg::kSummaryPoint, 7, Kind::kMessage, Msg::kKeyValue},
    {Msg::kSummaryPoint, 4, Kind::kFixed64},
    {Msg::kKeyValue, 1, Kind::kBytes},
    {Msg::kKeyValue, 2, Kind::kMessage, Msg::kAnyValue},
    {Msg::kAnyValue, 1, Kind::kBytes},
    {Msg::kAnyValue, 2, Kind::kVarint},
    {Msg::kAnyValue, 3, Kind::kVarint},
    {Msg::kAnyValue, 4, Kind::kFixed64},
    {Msg::kAnyValue, 5, Kind::kMessage, Msg::kArray},
    {Msg::kAnyValue, 6, Kind::kMessage, Msg::kKvList},
    {Msg::kAnyValue, 7, Kind::kBytes},
    {Msg::kArray, 1, Kind::kMessage, Msg::kAnyValue},
    {Msg::kKvList, 1, Kind::kMessage, Msg::kKeyValue},
};

const Field* Find(Msg in, uint32_t number) {
  for (const Field& f : kFields) {
    if (f.in == in && f.number == number) return &f;
  }
  return nullptr;
}

bool IsPoint(Msg m) {
  return m == Msg::kNumberPoint || m == Msg::kHistogramPoint || m == Msg::kExpPoint ||
         m == Msg::kSummaryPoint;
}

enum Wire : uint32_t { kVarintWire = 0, kFixed64Wire = 1, kLengthWire = 2, kFixed32Wire = 5 };

// The wire type a known field is kept under without becoming an unknown field.
bool Matches(Kind kind, uint32_t wire) {
  switch (kind) {
    case Kind::kVarint:
      return wire == kVarintWire;
    case Kind::kFixed64:
      return wire == kFixed64Wire;
    case Kind::kBytes:
    case Kind::kMessage:
      return wire == kLengthWire;
    case Kind::kBuckets:
    case Kind::kBounds:
      return wire == kFixed64Wire || wire == kLengthWire;
  }
  return false;
}

class Scanner {
 public:
  Scanner(const RequestLimits& limits, Shape& shape) : limits_(limits), shape_(shape) {}

  std::optional<Failure> Message(std::string_view bytes, Msg type, int depth) {
    if (depth > limits_.max_depth) {
      return TooMany("levels of nested messages", static_cast<uint64_t>(limits_.max_depth));
    }
    uint64_t buckets = 0, bounds = 0;
    while (!bytes.empty()) {
      uint64_t tag = 0;
      if (!Varint(bytes, &tag)) return Invalid();
      const uint32_t wire = static_cast<uint32_t>(tag & 7);
      const uint64_t number = tag >> 3;
      if (number == 0 || number > 536870911) return Invalid();
      std::string_view payload;
      if (!Take(bytes, wire, &payload)) return Invalid();
      const Field* field = Find(type, static_cast<uint32_t>(number));
      if (field == nullptr || !Matches(field->kind, wire)) {
        if (auto f = Add(1)) return f;  // kept as an unknown field
        continue;
      }
      if (field->kind == Kind::kBuckets || field->kind == Kind::kBounds) {
        if (wire == kLengthWire && payload.size() % 8 != 0) return Invalid();
        const uint64_t n = wire == kLengthWire ? payload.size() / 8 : 1;
        uint64_t& tally = field->kind == Kind::kBuckets ? buckets : bounds;
        tally += n;
        if (tally > limits_.max_buckets) {
          return TooMany("buckets in one histogram data point", limits_.max_buckets);
        }
        if (auto f = Add(n)) return f;
        continue;
      }
      if (field->kind != Kind::kMessage) continue;
      if (IsPoint(field->child) && ++shape_.points > limits_.max_points) {
        return TooMany("data points", limits_.max_points, kPointsSetting);
      }
      if (auto f = Add(1)) return f;
      if (auto f = Message(payload, field->child, depth + 1)) return f;
    }
    return std::nullopt;
  }

 private:
  static bool Varint(std::string_view& bytes, uint64_t* value) {
    *value = 0;
    for (int shift = 0; shift < 70 && !bytes.empty(); shift += 7) {
      const auto byte = static_cast<unsigned char>(bytes.front());
      bytes.remove_prefix(1);
      *value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;  // truncated, or longer than ten bytes
  }

  // The field's payload, taken off the front of `bytes`.
  static bool Take(std::string_view& bytes, uint32_t wire, std::string_view* payload) {
    uint64_t size = 0;
    switch (wire) {
      case kVarintWire:
        return Varint(bytes, &size);
      case kFixed64Wire:
        size = 8;
        break;
      case kFixed32Wire:
        size = 4;
        break;
      case kLengthWire:
        if (!Varint(bytes, &size)) return false;
        break;
      default:
        return false;  // groups (3, 4) are not part of OTLP; 6 and 7 do not exist
    }
    if (size > bytes.size()) return false;
    *payload = bytes.substr(0, size);
    bytes.remove_prefix(size);
    return true;
  }

  std::optional<Failure> Add(uint64_t n) {
    shape_.elements += n;
    if (shape_.elements <= limits_.max_elements) return std::nullopt;
    return TooMany("messages, repeated values and unknown fields", limits_.max_elements,
                   kElementsSetting);
  }

  std::optional<Failure> Invalid() const {
    return Failure{400,
                   "the body is not a valid protobuf ExportMetricsServiceRequest (truncated or "
                   "corrupt, stopped after " +
                       std::to_string(shape_.elements) + " elements)"};
  }

  const RequestLimits& limits_;
  Shape& shape_;
};

}  // namespace

std::optional<Failure> ScanProtobuf(std::string_view bytes, const RequestLimits& limits,
                                    Shape* shape) {
  *shape = Shape{};
  return Scanner(limits, *shape).Message(bytes, Msg::kRequest, 0);
}

std::optional<Failure> CheckPoints(uint64_t points, const RequestLimits& limits) {
  if (points <= limits.max_points) return std::nullopt;
  return TooMany("data points", limits.max_points, kPointsSetting);
}

std::optional<Failure> ScanJson(std::string_view bytes, const RequestLimits& limits) {
  uint64_t objects = 0;
  bool in_string = false, escaped = false;
  for (char c : bytes) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
    } else if (c == '{' && ++objects > limits.max_elements) {
      return TooMany("JSON objects", limits.max_elements, kElementsSetting);
    }
  }
  return std::nullopt;
}

}  // namespace gpuscope::otlp
