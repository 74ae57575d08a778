// A bounded look at an OTLP request before libprotobuf (or its JSON parser) builds the message.
//
// A protobuf body costs far more memory parsed than on the wire: an empty data point is two
// bytes on the wire and a heap object of about a hundred parsed, so a 4 KiB gzip body can become
// millions of objects. The pre-scan walks the wire format without allocating, counts what the
// parser would build (messages, repeated entries, unknown fields, data points, histogram
// buckets) and stops at the first limit passed, so the whole message is only built when it is
// known to be small. A JSON body is bounded by its structure alone (each message needs a '{').
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "otlp/decode.h"

namespace gpuscope::otlp {

// Per request. Defaults fit an OpenTelemetry Collector's batches (8192 points by default, each
// with a few attributes: a point is 1 element, an attribute 2). Parsed, an element costs about
// 150 bytes, so one request stays near 15 MB (measured: 200,000 elements, +30 MB peak RSS).
struct RequestLimits {
  uint64_t max_points = 20000;     // data points of every kind (default 20,000)
  uint64_t max_elements = 100000;  // messages, repeated entries, unknown fields (default 100,000)
  uint64_t max_buckets = 1024;     // bucket counts, and bounds, per histogram point (default 1024)
  int max_depth = 32;              // nested messages, AnyValue arrays and lists included
};

// What the scan counted (up to where it stopped).
struct Shape {
  uint64_t points = 0;
  uint64_t elements = 0;
};

// Checks a protobuf ExportMetricsServiceRequest's wire format against `limits`: 400 for bytes
// that are not a valid message, 413 for a limit passed (naming it). `shape` gets the counts.
std::optional<Failure> ScanProtobuf(std::string_view bytes, const RequestLimits& limits,
                                    Shape* shape);

// 413 when `points` (counted on a parsed JSON request) are more than `limits.max_points`.
std::optional<Failure> CheckPoints(uint64_t points, const RequestLimits& limits);

// Checks a JSON body's structure: objects ('{') at most `limits.max_elements` (413 beyond).
// Data points are counted after the (then bounded) parse.
std::optional<Failure> ScanJson(std::string_view bytes, const RequestLimits& limits);

}  // namespace gpuscope::otlp
