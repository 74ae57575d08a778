// Decoding an OTLP/HTTP metrics request body: the encoding from Content-Type,
// gzip from Content-Encoding (zlib, bounded so a small body cannot inflate
// without limit), and the points the store keeps (model.h), named by the KPI
// conventions (kpi.h). The messages themselves are parsed by the wire module
// (wire.h).
//
// A point gpuscope cannot keep (a Summary or an exponential histogram, a
// histogram whose buckets do not match its bounds, a metric without a name)
// is rejected by itself and counted, with a message for the partial-success
// answer; the other points of the request are kept.
//
// Thread safety: pure functions.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "otlp/kpi.h"
#include "otlp/model.h"

namespace gpuscope::otlp {

enum class Encoding : uint8_t { kProtobuf, kJson };

// application/x-protobuf (also application/protobuf) or application/json, parameters ignored.
std::optional<Encoding> EncodingOf(std::string_view content_type);

// Why a whole request was refused: its HTTP status and one sentence.
struct Failure {
  int status = 400;
  std::string message;
};

// The body after Content-Encoding ("", "identity" or "gzip"), at most `limit` bytes. Several
// gzip members are read in turn; other bytes after the gzip stream are refused (400).
std::optional<Failure> DecodeContent(std::string_view body, std::string_view encoding,
                                     std::size_t limit, std::string* out);

struct Point {
  uint32_t origin = 0;  // index into Batch::origins
  Naming naming;
  Kind kind = Kind::kGauge;
  bool delta = false;  // a delta Sum or Histogram: added to the running total
  Labels labels;       // the point's attributes (and the scope's none), sorted
  double value = 0;    // gauge or counter
  HistogramValue histogram;
};

struct Batch {
  std::vector<Origin> origins;
  std::vector<Point> points;
  uint64_t rejected = 0;  // points that could not be kept
  std::string problem;    // the first reason, for the partial-success message
};

}  // namespace gpuscope::otlp
