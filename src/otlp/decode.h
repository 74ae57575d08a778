// Decoding an OTLP/HTTP metrics request body: the encoding from Content-Type,
// gzip from Content-Encoding (zlib, bounded so a small body cannot inflate
// without limit), the protobuf or JSON ExportMetricsServiceRequest, and its
// conversion to the points the store keeps (model.h), named by the KPI
// conventions (kpi.h).
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

namespace pb {
class ExportMetricsServiceRequest;
}

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

// Sends libprotobuf's log lines (one per invalid UTF-8 string parsed, for one) to the debug
// log instead of stderr. Once per process; ParseRequest calls it, Receiver too (before serving).
void QuietProtobufLog();

// The request message from its bytes.
std::optional<Failure> ParseRequest(std::string_view bytes, Encoding encoding,
                                    pb::ExportMetricsServiceRequest* out);

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

// Points in the request (including the ones that will be rejected).
uint64_t CountPoints(const pb::ExportMetricsServiceRequest& request);

// The request's points, named by `conventions`.
Batch ToBatch(const pb::ExportMetricsServiceRequest& request, const Conventions& conventions);

}  // namespace gpuscope::otlp
