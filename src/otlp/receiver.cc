#include "otlp/receiver.h"

#include <algorithm>
#include <cmath>
#include <mutex>

#include "base/log.h"
#include "otlp/peer.h"

namespace gpuscope::otlp {
namespace {

constexpr std::string_view kProtobufType = "application/x-protobuf";
constexpr std::string_view kJsonType = "application/json";

double SteadySeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double UnixSeconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

http::Response Answer(int status, std::string body, Encoding encoding) {
  http::Response response;
  response.status = status;
  response.content_type = std::string(encoding == Encoding::kJson ? kJsonType : kProtobufType);
  response.body = std::make_shared<const std::string>(std::move(body));
  return response;
}

// google.rpc.Status with the message (gRPC codes: 3 INVALID_ARGUMENT, 8 RESOURCE_EXHAUSTED).
http::Response Refuse(const WireCodec& wire, int status, const std::string& message,
                      Encoding encoding) {
  const int code = status == 429 || status == 413 ? 8 : 3;
  return Answer(status, wire.status_body(code, message, encoding), encoding);
}

}  // namespace

Receiver::Receiver(ReceiverOptions options, Store& store, Clock clock, WallClock wall)
    : options_(std::move(options)),
      store_(store),
      clock_(clock ? std::move(clock) : Clock(SteadySeconds)),
      wall_(wall ? std::move(wall) : WallClock(UnixSeconds)),
      namer_(NamerOf(options_.conventions)) {}

void Receiver::Register(http::Server& server) {
  server.HandlePost(
      std::string(kMetricsPath), [this](const http::Request& r) { return Handle(r); },
      options_.max_body_bytes);
}

void Receiver::RefillLocked(double now) {
  const double rate = options_.max_points_per_second;
  if (refilled_at_ < 0) {
    tokens_ = rate;
  } else {
    tokens_ = std::min(rate, tokens_ + (now - refilled_at_) * rate);
  }
  refilled_at_ = now;
}

bool Receiver::Exhausted(double* retry_after) {
  std::lock_guard lock(bucket_mu_);
  RefillLocked(clock_());
  if (tokens_ >= 1) return false;
  *retry_after = std::max(1.0, std::ceil((1 - tokens_) / options_.max_points_per_second));
  return true;
}

bool Receiver::Admit(uint64_t points, double* retry_after) {
  std::lock_guard lock(bucket_mu_);
  RefillLocked(clock_());
  const double rate = options_.max_points_per_second;
  // A request larger than one second's budget still passes once the bucket is full; the
  // debt it leaves holds the next ones back.
  if (tokens_ <= 0 || (tokens_ < static_cast<double>(points) && tokens_ < rate)) {
    *retry_after = std::max(1.0, std::ceil((std::min<double>(points, rate) - tokens_) / rate));
    return false;
  }
  tokens_ -= static_cast<double>(points);
  return true;
}

http::Response Receiver::TooFast(const WireCodec& wire, double retry_after, Encoding answer) {
  store_.CountRequest(429);
  http::Response response =
      Refuse(wire, 429,
             "over the receiver's limit of " +
                 std::to_string(std::llround(options_.max_points_per_second)) +
                 " points per second (otlp-max-points-per-second); retry later",
             answer);
  response.headers.emplace_back("Retry-After", std::to_string(std::llround(retry_after)));
  return response;
}

std::optional<http::Response> Receiver::Parse(const WireCodec& wire, std::string_view bytes,
                                              Encoding encoding, Encoding answer,
                                              std::unique_ptr<Request>* message) {
  auto refuse = [&](const Failure& failure) {
    store_.CountRequest(failure.status);
    return Refuse(wire, failure.status, failure.message, answer);
  };
  // Protobuf: counted on the wire, so points are paid for before the message is built. JSON:
  // bounded by its objects, counted once built.
  uint64_t points = 0;
  if (encoding == Encoding::kProtobuf) {
    Shape shape;
    if (auto failure = ScanProtobuf(bytes, options_.limits, &shape)) return refuse(*failure);
    points = shape.points;
  } else if (auto failure = ScanJson(bytes, options_.limits)) {
    return refuse(*failure);
  }
  double retry_after = 1;
  if (points > 0 && !Admit(points, &retry_after)) return TooFast(wire, retry_after, answer);
  if (auto failure = wire.parse(bytes, encoding, message)) return refuse(*failure);
  if (encoding == Encoding::kJson) {
    points = (*message)->Points();
    if (auto failure = CheckPoints(points, options_.limits)) return refuse(*failure);
    if (points > 0 && !Admit(points, &retry_after)) return TooFast(wire, retry_after, answer);
  }
  return std::nullopt;
}

http::Response Receiver::Handle(const http::Request& request) {
  const Result<const WireCodec*>& loaded = Wire();
  if (!loaded.ok()) {  // a broken install: say so to the operator, and to each sender
    static std::once_flag logged;
    std::call_once(logged, [&] {
      log::Error("otlp: {}; POST /v1/metrics answers 503", loaded.status().message());
    });
    store_.CountRequest(503);
    http::Response response;
    response.status = 503;
    response.body = std::make_shared<const std::string>(
        "gpuscope cannot decode OTLP here: " + loaded.status().message() + "\n");
    return response;
  }
  const WireCodec& wire = **loaded;
  const std::optional<Encoding> encoding = EncodingOf(request.content_type);
  const Encoding answer = encoding.value_or(Encoding::kProtobuf);
  auto refuse = [&](int status, const std::string& message) {
    store_.CountRequest(status);
    return Refuse(wire, status, message, answer);
  };
  if (request.body_too_large) {
    return refuse(413, "the request body is larger than the receiver's limit of " +
                           std::to_string(options_.max_body_bytes) +
                           " bytes (otlp-max-request-bytes); send smaller batches");
  }
  if (!encoding) {
    return refuse(415, "unsupported Content-Type '" + std::string(request.content_type) +
                           "': send application/x-protobuf or application/json");
  }
  double retry_after = 1;
  if (Exhausted(&retry_after)) return TooFast(wire, retry_after, answer);  // before inflating
  std::string bytes;
  if (auto failure =
          DecodeContent(request.body, request.content_encoding, options_.max_body_bytes, &bytes)) {
    return refuse(failure->status, failure->message);
  }
  std::unique_ptr<Request> message;
  if (auto refused = Parse(wire, bytes, *encoding, answer, &message)) return std::move(*refused);
  const uint64_t points = message->Points();
  const std::string peer =
      PeerKey(request.peer, request.peer_port, request.local_port, options_.proc_root);
  const IngestResult result = store_.Ingest(message->ToBatch(namer_), wall_(), peer);
  store_.CountRequest(200);
  const std::string why = result.rejected == 0
                              ? std::string()
                              : std::to_string(result.rejected) + " of " + std::to_string(points) +
                                    " data points rejected: " + result.problem;
  return Answer(200, wire.response_body(result.rejected, why, answer), answer);
}

}  // namespace gpuscope::otlp
