// The OTLP/HTTP metrics endpoint (POST /v1/metrics), as the OTLP
// specification defines its answers:
//   200  ExportMetricsServiceResponse; `partial_success` set only when points
//        were rejected (rejected_data_points and a message naming why);
//   400  a body that does not decode (truncated or corrupt protobuf, invalid
//        JSON, corrupt gzip);
//   413  a body (or its inflated gzip) over `max_body_bytes`, or a request over `limits` (data
//        points, elements, histogram buckets, nesting), found by a bounded pre-scan before
//        the message is built (otlp/prescan.h);
//   415  a Content-Type other than application/x-protobuf or application/json,
//        or a Content-Encoding other than gzip;
//   503  the wire module (wire.h) could not be loaded: the message names it;
//   429  over `max_points_per_second`, with Retry-After: nothing of the request
//        is kept, so the client's retry loses nothing. With the token bucket empty the
//        body is refused before it is inflated; otherwise its points are counted by the
//        pre-scan and taken from the bucket before the message is built.
// Points are budgeted per sender, the request's peer (peer.h), in the store.
// Every 4xx body is a google.rpc.Status whose message names the problem, in
// the request's encoding (protobuf when the encoding is unknown). Answers
// carry the request's Content-Type.
//
// Thread safety: Handle may run on several server threads at once.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "http/server.h"
#include "otlp/kpi.h"
#include "otlp/prescan.h"
#include "otlp/store.h"
#include "otlp/wire.h"

namespace gpuscope::otlp {

struct ReceiverOptions {
  std::size_t max_body_bytes = 4 << 20;   // received and inflated, each (default 4 MiB)
  double max_points_per_second = 100000;  // sustained; bursts of one second (default 100000)
  Conventions conventions;                // built-in KPI names plus the mapping file's
  RequestLimits limits;                   // per request, checked before parsing (prescan.h)
  std::string proc_root = "/proc";        // where a local peer's socket is looked up (peer.h)
};

inline constexpr std::string_view kMetricsPath = "/v1/metrics";

class Receiver {
 public:
  using Clock = std::function<double()>;      // seconds, monotonic; for the rate limit
  using WallClock = std::function<double()>;  // unix seconds; for series expiry

  Receiver(ReceiverOptions options, Store& store, Clock clock = {}, WallClock wall = {});

  http::Response Handle(const http::Request& request);

  // Registers Handle on `server` at kMetricsPath (before Start).
  void Register(http::Server& server);

 private:
  // Takes `points` from the token bucket; false (and the seconds to wait) when it is empty.
  bool Admit(uint64_t points, double* retry_after);
  // Refills the bucket; true (and the seconds to wait) when not even one point is left.
  bool Exhausted(double* retry_after);
  void RefillLocked(double now);
  http::Response TooFast(const WireCodec& wire, double retry_after, Encoding answer);
  // The message from the inflated bytes, within the limits and the rate; or the refusal.
  std::optional<http::Response> Parse(const WireCodec& wire, std::string_view bytes,
                                      Encoding encoding, Encoding answer,
                                      std::unique_ptr<Request>* message);

  ReceiverOptions options_;
  Store& store_;
  Clock clock_;
  WallClock wall_;
  Namer namer_;  // options_.conventions'
  std::mutex bucket_mu_;
  double tokens_ = 0;
  double refilled_at_ = -1;
};

}  // namespace gpuscope::otlp
