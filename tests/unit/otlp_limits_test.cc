// The receiver under hostile input (issue 31): requests whose parsed form would be far larger
// than their bytes are refused by the pre-scan before libprotobuf builds them, the point rate
// is paid before parsing (and an empty bucket refuses before inflating), gzip trailers are
// checked, and libprotobuf's complaints stay off stderr.
#include <gtest/gtest.h>

#include <string>

#include "http/gzip.h"
#include "otlp/otlp_metrics.pb.h"
#include "otlp/prescan.h"
#include "otlp/receiver.h"
#include "otlp/store.h"
#include "otlp_test_util.h"

namespace gpuscope::otlp {
namespace {

using testing::AddGauge;
using testing::AddResource;

// A length-delimited field on the wire (field numbers below 16, lengths below 2^21).
std::string Field(int number, const std::string& payload) {
  std::string out(1, static_cast<char>(number << 3 | 2));
  uint64_t size = payload.size();
  do {
    out.push_back(static_cast<char>((size & 0x7f) | (size > 0x7f ? 0x80 : 0)));
    size >>= 7;
  } while (size != 0);
  return out + payload;
}

// A request with one gauge metric whose Gauge message holds `gauge`.
std::string RequestWithGauge(const std::string& gauge) {
  const std::string metric = Field(1, "m") + Field(5, gauge);
  return Field(1, Field(2, Field(2, metric)));
}

// `n` empty data points: two bytes each on the wire.
std::string EmptyPoints(std::size_t n) {
  std::string out;
  out.reserve(2 * n);
  for (std::size_t i = 0; i < n; ++i) out += std::string("\x0a\x00", 2);
  return out;
}

class LimitsTest : public ::testing::Test {
 protected:
  http::Response Post(const std::string& body, std::string encoding = "",
                      std::string type = "application/x-protobuf") {
    return testing::PostTo(receiver_, body, type, encoding);
  }
  static std::string MessageOf(const http::Response& r) {
    pb::Status status;
    EXPECT_TRUE(status.ParseFromString(*r.body));
    return status.message();
  }
  std::string Lines() { return testing::AppLines(store_, 1000); }

  double steady_ = 100;
  Store store_;
  ReceiverOptions options_ = [] {
    ReceiverOptions o;
    o.max_points_per_second = 1e9;
    o.limits = {.max_points = 100, .max_elements = 1000, .max_buckets = 16, .max_depth = 12};
    return o;
  }();
  Receiver receiver_{options_, store_, [this] { return steady_; }, [] { return 1000.0; }};
};

// Issue 31 finding 3: 4 KiB of gzip inflated to 2M empty data points and was answered 200.
TEST(GzipBombTest, EmptyDataPointsAreRefusedAtTheDefaultLimitWhileScanning) {
  const std::string body = RequestWithGauge(EmptyPoints(2'000'000));
  const std::string zipped = http::Gzip(body).value();
  ASSERT_LT(zipped.size(), 8192u);  // the attack's size
  Store store;
  Receiver receiver(ReceiverOptions{}, store);
  http::Request r;
  r.method = "POST";
  r.path = kMetricsPath;
  r.content_type = "application/x-protobuf";
  r.content_encoding = "gzip";
  r.body = zipped;
  http::Response answer = receiver.Handle(r);
  EXPECT_EQ(answer.status, 413);
  pb::Status status;
  ASSERT_TRUE(status.ParseFromString(*answer.body));
  EXPECT_NE(status.message().find("more than 20000 data points, the receiver's limit per request "
                                  "(otlp-max-points-per-request)"),
            std::string::npos)
      << status.message();
  // The scan stops at the first point past the limit, without building any of them.
  Shape shape;
  ASSERT_TRUE(ScanProtobuf(body, RequestLimits{}, &shape).has_value());
  EXPECT_EQ(shape.points, RequestLimits{}.max_points + 1);
}

TEST_F(LimitsTest, EveryRepeatedFieldCountsTowardTheElementLimit) {
  // 2,000 empty attributes on one point; 2,000 unknown fields; packed buckets past the limit.
  std::string point;
  for (int i = 0; i < 2000; ++i) point += Field(7, "");
  http::Response attributes = Post(RequestWithGauge(Field(1, point)));
  EXPECT_EQ(attributes.status, 413);
  EXPECT_NE(MessageOf(attributes).find("more than 1000 messages, repeated values"),
            std::string::npos)
      << MessageOf(attributes);
  std::string unknown;
  for (int i = 0; i < 2000; ++i) unknown += std::string("\xa0\x06\x01", 3);  // field 100, varint
  EXPECT_EQ(Post(RequestWithGauge(unknown)).status, 413);
  const std::string histogram_point = Field(6, std::string(17 * 8, '\0'));  // 17 bucket counts
  const std::string metric = Field(1, "h") + Field(9, Field(1, histogram_point));
  http::Response buckets = Post(Field(1, Field(2, Field(2, metric))));
  EXPECT_EQ(buckets.status, 413);
  EXPECT_NE(MessageOf(buckets).find("more than 16 buckets in one histogram data point"),
            std::string::npos);
  EXPECT_EQ(Lines(), "");
}

TEST_F(LimitsTest, NestingPastTheDepthLimitIsRefused) {
  std::string value = Field(1, "leaf");                            // AnyValue{string_value}
  for (int i = 0; i < 10; ++i) value = Field(5, Field(1, value));  // AnyValue{array{values}}
  const std::string point = Field(7, Field(1, "k") + Field(2, value));
  http::Response deep = Post(RequestWithGauge(Field(1, point)));
  EXPECT_EQ(deep.status, 413);
  EXPECT_NE(MessageOf(deep).find("levels of nested messages"), std::string::npos);
}

TEST_F(LimitsTest, JsonIsBoundedByItsObjectsAndItsPoints) {
  std::string many = "{\"resourceMetrics\":[";
  for (int i = 0; i < 1001; ++i) many += i ? ",{}" : "{}";
  http::Response objects = Post(many + "]}", "", "application/json");
  EXPECT_EQ(objects.status, 413);
  EXPECT_EQ(objects.content_type, "application/json");
  std::string points;
  for (int i = 0; i < 101; ++i) points += i ? ",{\"asDouble\":1}" : "{\"asDouble\":1}";
  const std::string request =
      "{\"resourceMetrics\":[{\"scopeMetrics\":[{\"metrics\":[{\"name\":\"g\",\"gauge\":"
      "{\"dataPoints\":[" +
      points + "]}}]}]}]}";
  http::Response too_many = Post(request, "", "application/json");
  EXPECT_EQ(too_many.status, 413);
  EXPECT_NE(std::string(*too_many.body).find("more than 100 data points"), std::string::npos);
}

TEST_F(LimitsTest, TheRateIsPaidBeforeParsingAndAnEmptyBucketRefusesBeforeInflating) {
  ReceiverOptions options = options_;
  options.max_points_per_second = 10;
  Receiver receiver(
      options, store_, [this] { return steady_; }, [] { return 1000.0; });
  auto post = [&](const std::string& body, const std::string& encoding = "") {
    http::Request r;
    r.method = "POST";
    r.path = kMetricsPath;
    r.content_type = "application/x-protobuf";
    r.content_encoding = encoding;
    r.body = body;
    return receiver.Handle(r).status;
  };
  auto gauges = [](int n) {
    pb::ExportMetricsServiceRequest request;
    pb::ScopeMetrics* scope = AddResource(request, {});
    for (int i = 0; i < n; ++i) AddGauge(scope, "g" + std::to_string(i), i);
    return request.SerializeAsString();
  };
  EXPECT_EQ(post(gauges(6)), 200);  // 4 tokens left
  // Six points whose metric name is not UTF-8: libprotobuf would refuse them (400), but they
  // are counted on the wire and refused first.
  std::string bad = gauges(6);
  bad[bad.find("g5")] = '\xff';
  EXPECT_EQ(post(bad), 429);
  EXPECT_EQ(post(gauges(4)), 200);                           // the bucket is now empty
  EXPECT_EQ(post("\x1f\x8b not gzip at all", "gzip"), 429);  // refused without inflating
  steady_ += 1;
  EXPECT_EQ(post("\x1f\x8b not gzip at all", "gzip"), 400);
}

TEST_F(LimitsTest, GzipMembersAreReadInTurnAndTrailingGarbageIsRefused) {
  pb::ExportMetricsServiceRequest request;
  AddGauge(AddResource(request, {}), "zipped", 7);
  const std::string body = request.SerializeAsString();
  const std::string half = body.substr(0, body.size() / 2);
  EXPECT_EQ(
      Post(http::Gzip(half).value() + http::Gzip(body.substr(half.size())).value(), "gzip").status,
      200);
  http::Response garbage = Post(http::Gzip(body).value() + "trailing garbage", "gzip");
  EXPECT_EQ(garbage.status, 400);
  EXPECT_NE(MessageOf(garbage).find("16 bytes of garbage after the end of its gzip stream"),
            std::string::npos)
      << MessageOf(garbage);
}

TEST_F(LimitsTest, InvalidUtf8WritesNothingToStderr) {
  pb::ExportMetricsServiceRequest request;
  AddGauge(AddResource(request, {}), "bad", 1);
  std::string body = request.SerializeAsString();
  body[body.find("bad")] = '\xff';
  ::testing::internal::CaptureStderr();
  http::Response answer = Post(body);
  const std::string stderr_text = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(answer.status, 400);
  EXPECT_EQ(stderr_text, "");
}

}  // namespace
}  // namespace gpuscope::otlp
