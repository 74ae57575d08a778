// The wire module's table (../wire.h).
#include <google/protobuf/util/json_util.h>

#include "otlp/otlp_metrics.pb.h"
#include "otlp/wire/messages.h"

namespace gpuscope::otlp {
namespace {

class ParsedRequest final : public Request {
 public:
  uint64_t Points() const override { return CountPoints(message_); }
  Batch ToBatch(const Namer& namer) const override { return otlp::ToBatch(message_, namer); }
  pb::ExportMetricsServiceRequest* message() { return &message_; }

 private:
  pb::ExportMetricsServiceRequest message_;
};

std::optional<Failure> Parse(std::string_view bytes, Encoding encoding,
                             std::unique_ptr<Request>* out) {
  auto request = std::make_unique<ParsedRequest>();
  if (auto failure = ParseRequest(bytes, encoding, request->message())) return failure;
  *out = std::move(request);
  return std::nullopt;
}

std::string Body(const google::protobuf::Message& message, Encoding encoding) {
  std::string body;
  if (encoding == Encoding::kJson) {
    (void)google::protobuf::util::MessageToJsonString(message, &body);
  } else {
    message.SerializeToString(&body);
  }
  return body;
}

std::string StatusBody(int grpc_code, const std::string& message, Encoding encoding) {
  pb::Status status;
  status.set_code(grpc_code);
  status.set_message(message);
  return Body(status, encoding);
}

std::string ResponseBody(uint64_t rejected, const std::string& message, Encoding encoding) {
  pb::ExportMetricsServiceResponse reply;
  if (rejected > 0) {
    pb::ExportMetricsPartialSuccess* partial = reply.mutable_partial_success();
    partial->set_rejected_data_points(static_cast<int64_t>(rejected));
    partial->set_error_message(message);
  }
  return Body(reply, encoding);
}

constexpr WireCodec kCodec = {Parse, StatusBody, ResponseBody, log::SetLevel};

}  // namespace
}  // namespace gpuscope::otlp

extern "C" __attribute__((visibility("default"))) const gpuscope::otlp::WireCodec*
gpuscope_otlp_wire() {
  return &gpuscope::otlp::kCodec;
}
