// The OTLP/HTTP receiver's answers (status codes, partial success, messages), what it keeps
// and how the store renders it. The store is read back through Families().
#include <gtest/gtest.h>

#include <string>

#include "http/gzip.h"
#include "otlp/otlp_metrics.pb.h"
#include "otlp/receiver.h"
#include "otlp/store.h"
#include "otlp_test_util.h"

namespace gpuscope::otlp {
namespace {

using testing::AddCounter;
using testing::AddGauge;
using testing::AddHistogram;
using testing::AddResource;

class ReceiverTest : public ::testing::Test {
 protected:
  http::Response Post(const std::string& body, std::string type = "application/x-protobuf",
                      std::string encoding = "", bool too_large = false) {
    return testing::PostTo(receiver_, body, type, encoding, too_large);
  }
  // The rendered application lines of every family.
  std::string Lines() { return testing::AppLines(store_, now_); }
  static pb::Status StatusOf(const http::Response& r) {
    pb::Status status;
    EXPECT_TRUE(status.ParseFromString(*r.body));
    return status;
  }
  static pb::ExportMetricsServiceResponse ReplyOf(const http::Response& r) {
    pb::ExportMetricsServiceResponse reply;
    EXPECT_TRUE(reply.ParseFromString(*r.body));
    return reply;
  }

  double steady_ = 100, now_ = 1000;
  Store store_;
  ReceiverOptions options_ = [] {
    ReceiverOptions o;
    o.max_body_bytes = 64 * 1024;
    o.max_points_per_second = 10;
    return o;
  }();
  Receiver receiver_{options_, store_, [this] { return steady_; }, [this] { return now_; }};
};

TEST_F(ReceiverTest, KeepsGaugesCountersAndHistogramsAndAnswersFullSuccess) {
  pb::ExportMetricsServiceRequest request;
  pb::ScopeMetrics* scope = AddResource(request, {{"service.name", "trainer"}});
  AddGauge(scope, "queue.depth", 3);
  AddCounter(scope, "training.samples", 640);
  AddHistogram(scope, "training.step.duration", "ms", {100, 200}, {1, 2, 1}, 650);
  http::Response r = Post(request.SerializeAsString());
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "application/x-protobuf");
  EXPECT_FALSE(ReplyOf(r).has_partial_success());
  const std::string lines = Lines();
  EXPECT_NE(lines.find("gpuscope_app_queue_depth{gpu=\"\",UUID=\"\",service=\"trainer\"} 3\n"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("gpuscope_app_samples_total{gpu=\"\",UUID=\"\",service=\"trainer\"} 640"),
            std::string::npos)
      << lines;
  // Milliseconds become seconds, buckets become cumulative, +Inf last.
  EXPECT_NE(lines.find("gpuscope_app_step_duration_seconds_bucket{gpu=\"\",UUID=\"\",service="
                       "\"trainer\",le=\"0.1\"} 1\n"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("le=\"0.2\"} 3\n"), std::string::npos) << lines;
  EXPECT_NE(lines.find("le=\"+Inf\"} 4\n"), std::string::npos) << lines;
  EXPECT_NE(lines.find("gpuscope_app_step_duration_seconds_sum{gpu=\"\",UUID=\"\",service="
                       "\"trainer\"} 0.65\n"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("_count{gpu=\"\",UUID=\"\",service=\"trainer\"} 4\n"), std::string::npos);
}

TEST_F(ReceiverTest, DeltaPointsAddUpCumulativeOnesReplace) {
  for (int i = 0; i < 3; ++i) {
    pb::ExportMetricsServiceRequest request;
    pb::ScopeMetrics* scope = AddResource(request, {{"service.name", "s"}});
    AddCounter(scope, "training.tokens", 100, /*delta=*/true);
    AddHistogram(scope, "gen_ai.server.time_to_first_token", "s", {0.5}, {1, 1}, 1.5, true);
    ASSERT_EQ(Post(request.SerializeAsString()).status, 200);
    steady_ += 1;
  }
  const std::string lines = Lines();
  EXPECT_NE(lines.find("gpuscope_app_tokens_total{gpu=\"\",UUID=\"\",service=\"s\"} 300"),
            std::string::npos)
      << lines;
  EXPECT_NE(lines.find("gpuscope_app_time_to_first_token_seconds_count{gpu=\"\",UUID=\"\","
                       "service=\"s\"} 6"),
            std::string::npos)
      << lines;
}

TEST_F(ReceiverTest, JsonWithUnknownFieldsAndIntegersAsStringsIsAccepted) {
  const std::string json = R"({"resourceMetrics":[{"resource":{"attributes":[
      {"key":"service.name","value":{"stringValue":"web"}}],"futureField":1},
    "scopeMetrics":[{"scope":{"name":"x"},"metrics":[{"name":"http.server.request.duration",
      "unit":"s","newThing":{"a":1},"histogram":{"aggregationTemporality":2,"dataPoints":[
        {"startTimeUnixNano":"1","timeUnixNano":"2","count":"3","sum":0.6,
         "bucketCounts":["1","2"],"explicitBounds":[0.25],
         "exemplars":[{"traceId":"5B8EFFF798038103D269B633813FC60C","asDouble":0.1}]}]}}]}]}]})";
  http::Response r = Post(json, "application/json; charset=utf-8");
  ASSERT_EQ(r.status, 200) << *r.body;
  EXPECT_EQ(r.content_type, "application/json");
  EXPECT_EQ(*r.body, "{}");
  EXPECT_NE(Lines().find("gpuscope_app_request_duration_seconds_count{gpu=\"\",UUID=\"\","
                         "service=\"web\"} 3"),
            std::string::npos);
}

TEST_F(ReceiverTest, UnknownProtobufFieldsAreSkipped) {
  pb::ExportMetricsServiceRequest request;
  AddGauge(AddResource(request, {}), "g", 1);
  std::string body = request.SerializeAsString();
  body += std::string(
      "\xa2\x06\x03"
      "abc",
      6);  // field 100, length-delimited: unknown
  EXPECT_EQ(Post(body).status, 200);
  EXPECT_NE(Lines().find("gpuscope_app_g{gpu=\"\",UUID=\"\"} 1"), std::string::npos);
}

TEST_F(ReceiverTest, MalformedRequestsGetTheSpecStatusAndAMessage) {
  pb::ExportMetricsServiceRequest request;
  AddGauge(AddResource(request, {{"service.name", "trainer"}}), "g", 1);
  const std::string body = request.SerializeAsString();
  http::Response truncated = Post(body.substr(0, body.size() - 3));
  EXPECT_EQ(truncated.status, 400);
  EXPECT_NE(StatusOf(truncated).message().find("truncated or corrupt"), std::string::npos);
  http::Response type = Post(body, "text/plain");
  EXPECT_EQ(type.status, 415);
  EXPECT_NE(StatusOf(type).message().find("unsupported Content-Type 'text/plain'"),
            std::string::npos);
  http::Response encoding = Post(body, "application/x-protobuf", "br");
  EXPECT_EQ(encoding.status, 415);
  EXPECT_NE(StatusOf(encoding).message().find("Content-Encoding 'br'"), std::string::npos);
  http::Response big = Post("", "application/x-protobuf", "", /*too_large=*/true);
  EXPECT_EQ(big.status, 413);
  EXPECT_NE(StatusOf(big).message().find("65536 bytes"), std::string::npos);
  http::Response corrupt_gzip = Post("\x1f\x8b garbage", "application/x-protobuf", "gzip");
  EXPECT_EQ(corrupt_gzip.status, 400);
  EXPECT_NE(StatusOf(corrupt_gzip).message().find("gzip"), std::string::npos);
  http::Response json = Post("{\"resourceMetrics\": [", "application/json");
  EXPECT_EQ(json.status, 400);
  EXPECT_EQ(json.content_type, "application/json");
  EXPECT_EQ(Lines().find("gpuscope_app_g"), std::string::npos);  // nothing of them kept
}

TEST_F(ReceiverTest, GzipBodiesInflateWithinTheLimit) {
  pb::ExportMetricsServiceRequest request;
  AddGauge(AddResource(request, {}), "zipped", 7);
  EXPECT_EQ(Post(http::Gzip(request.SerializeAsString()).value(), "application/x-protobuf", "gzip")
                .status,
            200);
  EXPECT_NE(Lines().find("gpuscope_app_zipped{gpu=\"\",UUID=\"\"} 7"), std::string::npos);
  // A small body inflating past the limit (a gzip bomb) is refused.
  http::Response bomb =
      Post(http::Gzip(std::string(1 << 20, '\0')).value(), "application/x-protobuf", "gzip");
  EXPECT_EQ(bomb.status, 413);
  EXPECT_NE(StatusOf(bomb).message().find("inflates"), std::string::npos);
}

TEST_F(ReceiverTest, UnsupportedPointsAreRejectedAloneWithPartialSuccess) {
  pb::ExportMetricsServiceRequest request;
  pb::ScopeMetrics* scope = AddResource(request, {});
  AddGauge(scope, "kept", 1);
  pb::Metric* summary = scope->add_metrics();
  summary->set_name("latency.summary");
  summary->mutable_summary()->add_data_points();
  pb::HistogramDataPoint* bad = AddHistogram(scope, "bad.histogram", "s", {1}, {1, 1}, 1);
  bad->add_bucket_counts(5);  // three counts for one bound
  http::Response r = Post(request.SerializeAsString());
  ASSERT_EQ(r.status, 200);
  pb::ExportMetricsServiceResponse reply = ReplyOf(r);
  ASSERT_TRUE(reply.has_partial_success());
  EXPECT_EQ(reply.partial_success().rejected_data_points(), 2);
  EXPECT_NE(reply.partial_success().error_message().find("2 of 3 data points rejected"),
            std::string::npos)
      << reply.partial_success().error_message();
  EXPECT_NE(reply.partial_success().error_message().find("Summary"), std::string::npos);
  EXPECT_NE(Lines().find("gpuscope_app_kept{gpu=\"\",UUID=\"\"} 1"), std::string::npos);
}

TEST_F(ReceiverTest, OverThePointRateTheWholeRequestGets429AndIsKeptOnRetry) {
  pb::ExportMetricsServiceRequest request;
  pb::ScopeMetrics* scope = AddResource(request, {});
  for (int i = 0; i < 6; ++i) AddGauge(scope, "g" + std::to_string(i), i);
  EXPECT_EQ(Post(request.SerializeAsString()).status, 200);  // 6 of 10 tokens
  http::Response limited = Post(request.SerializeAsString());
  EXPECT_EQ(limited.status, 429);
  bool retry_after = false;
  for (const auto& [name, value] : limited.headers) retry_after |= name == "Retry-After";
  EXPECT_TRUE(retry_after);
  EXPECT_NE(StatusOf(limited).message().find("10 points per second"), std::string::npos);
  steady_ += 1;  // refilled
  EXPECT_EQ(Post(request.SerializeAsString()).status, 200);
}

TEST_F(ReceiverTest, NewSeriesBeyondTheLimitAreRejectedExistingOnesKeepUpdating) {
  Store small({.max_series = 2, .sender_share = 1, .kpi_reserve = 0, .expiry_s = 60});
  Receiver receiver(
      options_, small, [this] { return steady_ += 1; }, [this] { return now_; });
  auto post = [&](double v) {
    pb::ExportMetricsServiceRequest request;
    pb::ScopeMetrics* scope = AddResource(request, {});
    AddGauge(scope, "a", v);
    AddGauge(scope, "b", v);
    AddGauge(scope, "c", v);
    http::Request r;
    r.content_type = "application/x-protobuf";
    const std::string body = request.SerializeAsString();
    r.body = body;
    return ReplyOf(receiver.Handle(r));
  };
  EXPECT_EQ(post(1).partial_success().rejected_data_points(), 1);
  pb::ExportMetricsServiceResponse second = post(2);
  EXPECT_EQ(second.partial_success().rejected_data_points(), 1);
  EXPECT_NE(second.partial_success().error_message().find("otlp-max-series"), std::string::npos);
  EXPECT_EQ(small.series(), 2u);
  // Expired series make room again.
  now_ += 120;
  Snapshot snapshot;
  small.Families(snapshot, now_);
  EXPECT_EQ(small.series(), 0u);
}

}  // namespace
}  // namespace gpuscope::otlp
