// What the OTLP store refuses (issue 31): points over the label and byte
// limits, one sender beyond its share, names that would squat a KPI or clash
// in /metrics, and points /metrics could not carry as valid exposition. Each
// refusal is a partial success that says why; /metrics stays valid.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <memory>
#include <string>

#include "exposition_check.h"
#include "otlp/receiver.h"
#include "otlp/store.h"
#include "otlp_test_util.h"

namespace gpuscope::otlp {
namespace {

using testing::AddCounter;
using testing::AddGauge;
using testing::AddHistogram;
using testing::AddResource;
using testing::Attr;
using testing::Exposition;

class StoreTest : public ::testing::Test {
 protected:
  void Use(StoreOptions options) {
    receiver_.reset();
    store_ = std::make_unique<Store>(options);
    receiver_ = std::make_unique<Receiver>(
        ReceiverOptions{}, *store_, [this] { return steady_ += 1; }, [this] { return now_; });
  }
  pb::ExportMetricsServiceResponse Post(const pb::ExportMetricsServiceRequest& request,
                                        const std::string& peer = "") {
    return testing::Post(*receiver_, request, peer);
  }
  // A request of one gauge from `service`.
  pb::ExportMetricsServiceResponse PostGauge(const std::string& service, const std::string& name) {
    pb::ExportMetricsServiceRequest request;
    AddGauge(AddResource(request, {{"service.name", service}}), name, 1);
    return Post(request);
  }
  static uint64_t Rejected(const pb::ExportMetricsServiceResponse& r) {
    return static_cast<uint64_t>(r.partial_success().rejected_data_points());
  }
  static std::string Why(const pb::ExportMetricsServiceResponse& r) {
    return r.partial_success().error_message();
  }
  // The exposition of the store, checked valid.
  std::string Body() {
    const std::string body = Exposition(*store_, now_);
    EXPECT_EQ(gpuscope::testing::ExpositionChecker::Problem(body), "") << body;
    return body;
  }

  double steady_ = 100, now_ = 1000;
  std::unique_ptr<Store> store_ = std::make_unique<Store>();
  std::unique_ptr<Receiver> receiver_ = std::make_unique<Receiver>(
      ReceiverOptions{}, *store_, [this] { return steady_ += 1; }, [this] { return now_; });
};

// Finding 2: 64 KiB attribute values took RSS to gigabytes.
TEST_F(StoreTest, LabelsOverTheirLimitsAreRefusedAndTheAnswerSaysWhy) {
  auto post = [&](const std::string& key, const std::string& value, const std::string& service) {
    pb::ExportMetricsServiceRequest request;
    pb::Metric* m = AddResource(request, {{"service.name", service}})->add_metrics();
    m->set_name("queue.depth");
    pb::NumberDataPoint* dp = m->mutable_gauge()->add_data_points();
    dp->set_as_double(1);
    Attr(dp->mutable_attributes(), key, value);
    return Post(request);
  };
  pb::ExportMetricsServiceResponse big = post("path", std::string(64 * 1024, 'x'), "s");
  EXPECT_EQ(Rejected(big), 1u);
  EXPECT_NE(Why(big).find("the value of attribute 'path' of 'gpuscope_app_queue_depth' has "
                          "65536 bytes, over the limit of 1024"),
            std::string::npos)
      << Why(big);
  EXPECT_NE(Why(post(std::string(200, 'k'), "v", "s")).find("over the limit of 128"),
            std::string::npos);
  EXPECT_NE(Why(post("k", "v", std::string(2000, 's'))).find("resource attribute service.name"),
            std::string::npos);
  EXPECT_FALSE(post("path", std::string(1024, 'x'), "s").has_partial_success());
  EXPECT_EQ(store_->series(), 1u);
}

// Finding 2: the series cap counted series, not bytes.
TEST_F(StoreTest, TheStoreHoldsNoMoreBytesThanItsBudget) {
  Use({.max_series = 10000, .max_bytes = 256 * 1024, .sender_share = 1});
  uint64_t rejected = 0;
  std::string why;
  for (int batch = 0; batch < 10; ++batch) {
    pb::ExportMetricsServiceRequest request;
    pb::ScopeMetrics* scope = AddResource(request, {{"service.name", "s"}});
    for (int i = 0; i < 20; ++i) {
      pb::Metric* m = scope->add_metrics();
      m->set_name("g");
      pb::NumberDataPoint* dp = m->mutable_gauge()->add_data_points();
      Attr(dp->mutable_attributes(), "id", std::to_string(batch * 20 + i) + std::string(1000, 'v'));
    }
    pb::ExportMetricsServiceResponse reply = Post(request);
    rejected += Rejected(reply);
    if (why.empty()) why = Why(reply);
  }
  EXPECT_GT(rejected, 100u);
  EXPECT_NE(why.find("otlp-max-bytes"), std::string::npos) << why;
  EXPECT_LE(store_->bytes(), 256u * 1024);
  EXPECT_GT(store_->bytes(), 200u * 1024);  // filled, not refused early
  EXPECT_LT(Body().size(), store_->bytes());
}

TEST_F(StoreTest, ASeriesOverItsByteLimitIsRefused) {
  pb::ExportMetricsServiceRequest request;
  // Under the request limits (1024 buckets a point, 1024 bytes a label value), over the
  // series': each of the 101 bucket lines carries the 900-byte service label.
  std::vector<double> bounds(100);
  for (std::size_t i = 0; i < bounds.size(); ++i) bounds[i] = static_cast<double>(i);
  AddHistogram(AddResource(request, {{"service.name", std::string(900, 's')}}), "wide", "s", bounds,
               std::vector<uint64_t>(bounds.size() + 1, 1), 1);
  pb::ExportMetricsServiceResponse reply = Post(request);
  EXPECT_EQ(Rejected(reply), 1u);
  EXPECT_NE(Why(reply).find("over the limit of 32768 bytes per series"), std::string::npos)
      << Why(reply);
  EXPECT_EQ(store_->bytes(), 0u);
}

// Finding 5: one sender filled the global series cap and starved the others.
TEST_F(StoreTest, OneSenderHoldsAtMostItsShareAndANewSenderGetsIn) {
  Use({.max_series = 100, .sender_share = 0.5, .min_sender_series = 0});
  pb::ExportMetricsServiceRequest flood;
  pb::ScopeMetrics* scope = AddResource(flood, {{"service.name", "noisy"}, {"host.name", "h"}});
  for (int i = 0; i < 150; ++i) AddGauge(scope, "g" + std::to_string(i), i);
  pb::ExportMetricsServiceResponse reply = Post(flood);
  EXPECT_EQ(Rejected(reply), 100u);  // half the cap, and the KPI room, stay free
  EXPECT_NE(Why(reply).find("the sender service.name 'noisy' host.name 'h' holds 50 series"),
            std::string::npos)
      << Why(reply);
  EXPECT_NE(Why(reply).find("otlp-sender-share"), std::string::npos);
  pb::ExportMetricsServiceRequest quiet;
  scope = AddResource(quiet, {{"service.name", "trainer"}, {"host.name", "h"}});
  for (int i = 0; i < 10; ++i) AddGauge(scope, "g" + std::to_string(i), i);
  EXPECT_FALSE(Post(quiet).has_partial_success());
  EXPECT_EQ(store_->series(), 60u);
}

TEST_F(StoreTest, OneSenderHoldsAtMostItsShareOfTheBytes) {
  Use({.max_bytes = 128 * 1024, .sender_share = 0.5, .min_sender_bytes = 0});
  for (int i = 0; i < 100; ++i) {
    pb::ExportMetricsServiceRequest request;
    pb::Metric* m = AddResource(request, {{"service.name", "noisy"}})->add_metrics();
    m->set_name("g");
    Attr(m->mutable_gauge()->add_data_points()->mutable_attributes(), "id",
         std::to_string(i) + std::string(1000, 'v'));
    Post(request);
  }
  EXPECT_LE(store_->bytes(), 64u * 1024);
  EXPECT_FALSE(PostGauge("trainer", "g").has_partial_success());
}

// Issue 39 item 12: a process rotating service.name got a new share per name; 40 names filled
// the 10,000-series cap and a trainer's KPI was refused. The share is per peer, which the
// sender cannot choose.
TEST_F(StoreTest, OnePeerRotatingServiceNamesIsHeldToItsShare) {
  Use({});  // 10,000 series, one peer at most an eighth: 1,250
  uint64_t rejected = 0;
  std::string why;
  for (int name = 0; name < 40; ++name) {
    pb::ExportMetricsServiceRequest flood;
    pb::ScopeMetrics* scope =
        AddResource(flood, {{"service.name", "rotor-" + std::to_string(name)}});
    for (int i = 0; i < 300; ++i) AddGauge(scope, "g" + std::to_string(i), i);
    pb::ExportMetricsServiceResponse reply = Post(flood, "10.0.0.7");
    rejected += Rejected(reply);
    if (why.empty()) why = Why(reply);
  }
  EXPECT_EQ(store_->series(), 1250u);
  EXPECT_EQ(rejected, 40u * 300 - 1250);
  EXPECT_NE(why.find("the sender peer 10.0.0.7 holds 1250 series"), std::string::npos) << why;
  // Another peer's trainer is admitted, its KPI and a metric of its own.
  pb::ExportMetricsServiceRequest trainer;
  pb::ScopeMetrics* scope = AddResource(trainer, {{"service.name", "trainer"}});
  AddHistogram(scope, "training.step.duration", "s", {0.1, 1}, {1, 1, 0}, 0.6);
  AddGauge(scope, "tokens.per.second", 5000);
  EXPECT_FALSE(Post(trainer, "10.0.0.8").has_partial_success());
  EXPECT_EQ(store_->series(), 1252u);
}

// Finding 5: however many senders fill the cap, the known KPIs keep a room.
TEST_F(StoreTest, TheKnownKpisKeepARoomThatOtherMetricsCannotFill) {
  Use({.max_series = 20});
  uint64_t rejected = 0;
  for (int i = 0; i < 30; ++i) rejected += Rejected(PostGauge("s" + std::to_string(i), "g"));
  EXPECT_EQ(rejected, 12u);  // 18 of 20: the last tenth is the KPIs'
  pb::ExportMetricsServiceRequest request;
  AddHistogram(AddResource(request, {{"service.name", "trainer"}}), "training.step.duration", "s",
               {1}, {1, 0}, 0.5);
  EXPECT_FALSE(Post(request).has_partial_success());
  EXPECT_NE(Body().find("gpuscope_app_step_duration_seconds_count"), std::string::npos);
}

// Finding 6: a gauge `step.duration.seconds` blocked `training.step.duration`.
TEST_F(StoreTest, NoOtherMetricCanTakeAKpiFamilysName) {
  pb::ExportMetricsServiceRequest squat;
  pb::ScopeMetrics* scope = AddResource(squat, {{"service.name", "squatter"}});
  AddGauge(scope, "step.duration.seconds", 1);
  AddGauge(scope, "step.duration.seconds.count", 1);
  AddHistogram(scope, "step.duration", "s", {1}, {1, 0}, 0.5);  // generic, same name and type
  AddGauge(scope, "samples", 1);  // gpuscope_app_samples: training.samples' OpenMetrics name
  pb::ExportMetricsServiceResponse reply = Post(squat);
  EXPECT_EQ(Rejected(reply), 4u);
  EXPECT_NE(Why(reply).find("would take a name of the KPI family "
                            "'gpuscope_app_step_duration_seconds', which is reserved"),
            std::string::npos)
      << Why(reply);
  pb::ExportMetricsServiceRequest real;
  scope = AddResource(real, {{"service.name", "trainer"}});
  AddHistogram(scope, "training.step.duration", "ms", {100}, {1, 1}, 150);
  AddCounter(scope, "training.samples", 64);
  EXPECT_FALSE(Post(real).has_partial_success());
  // Sent after the KPI, the squatters are refused too, and never join its family.
  EXPECT_EQ(Rejected(Post(squat)), 4u);
  const std::string body = Body();
  EXPECT_NE(body.find("gpuscope_app_step_duration_seconds_count{gpu=\"\",UUID=\"\","
                      "service=\"trainer\"} 2\n"),
            std::string::npos)
      << body;
  EXPECT_EQ(body.find("squatter"), std::string::npos) << body;
}

// Finding 7: a histogram `clash` and a gauge `clash.count` gave duplicate series.
TEST_F(StoreTest, FamiliesThatWouldWriteTheSameNameAreRefusedForTheNewcomer) {
  pb::ExportMetricsServiceRequest request;
  pb::ScopeMetrics* scope = AddResource(request, {{"service.name", "s"}});
  AddHistogram(scope, "clash", "", {1}, {1, 1}, 2);
  AddGauge(scope, "clash.count", 5);
  AddGauge(scope, "clash.bucket", 5);
  AddGauge(scope, "hits", 1);
  AddCounter(scope, "hits",
             3);  // gpuscope_app_hits_total: the family gpuscope_app_hits in OpenMetrics
  pb::ExportMetricsServiceResponse reply = Post(request);
  EXPECT_EQ(Rejected(reply), 3u);
  EXPECT_NE(Why(reply).find("'gpuscope_app_clash_count' (a gauge) would write "
                            "'gpuscope_app_clash_count', which the family 'gpuscope_app_clash' "
                            "writes in /metrics"),
            std::string::npos)
      << Why(reply);
  Body();
  // In the other order the gauge came first and keeps its name.
  Use({});
  pb::ExportMetricsServiceRequest reversed;
  scope = AddResource(reversed, {{"service.name", "s"}});
  AddGauge(scope, "clash.count", 5);
  AddHistogram(scope, "clash", "", {1}, {1, 1}, 2);
  EXPECT_EQ(Rejected(Post(reversed)), 1u);
  EXPECT_NE(Body().find("gpuscope_app_clash_count{"), std::string::npos);
}

// Finding 7: values the exposition cannot carry.
TEST_F(StoreTest, PointsThatWouldMakeMetricsInvalidAreRefusedOneByOne) {
  struct Case {
    std::string name, why;
    std::function<void(pb::ScopeMetrics*)> add;
  };
  const std::vector<Case> cases = {
      {"explicit +Inf bound", "non-finite bucket bound",
       [](pb::ScopeMetrics* s) {
         AddHistogram(s, "h1", "s", {1, INFINITY}, {1, 1, 0}, 1);
       }},
      {"NaN bound", "non-finite bucket bound",
       [](pb::ScopeMetrics* s) {
         AddHistogram(s, "h2", "s", {NAN}, {1, 1}, 1);
       }},
      {"count differs from the buckets", "has count 7 but its buckets add up to 2",
       [](pb::ScopeMetrics* s) {
         AddHistogram(s, "h3", "s", {1}, {1, 1}, 1)->set_count(7);
       }},
      {"NaN sum", "non-finite sum",
       [](pb::ScopeMetrics* s) {
         AddHistogram(s, "h4", "s", {1}, {1, 1}, NAN);
       }},
      {"negative counter", "has the value -5 (a monotonic sum must be finite and not negative)",
       [](pb::ScopeMetrics* s) { AddCounter(s, "c1", -5); }},
      {"NaN counter", "has the value NaN",
       [](pb::ScopeMetrics* s) {
         AddCounter(s, "c2", 0);
         s->mutable_metrics()->rbegin()->mutable_sum()->mutable_data_points(0)->set_as_double(NAN);
       }},
  };
  for (const Case& c : cases) {
    pb::ExportMetricsServiceRequest request;
    pb::ScopeMetrics* scope = AddResource(request, {{"service.name", "s"}});
    c.add(scope);
    AddGauge(scope, "fine", 1);
    pb::ExportMetricsServiceResponse reply = Post(request);
    EXPECT_EQ(Rejected(reply), 1u) << c.name;
    EXPECT_NE(Why(reply).find(c.why), std::string::npos) << c.name << ": " << Why(reply);
  }
  const std::string body = Body();
  EXPECT_EQ(body.find("+Inf\",le"), std::string::npos);
  EXPECT_EQ(store_->series(), 1u) << body;  // only `fine`
}

TEST_F(StoreTest, CountersThatWouldOverflowAreRefused) {
  for (double v : {1e308, 1e308}) {
    pb::ExportMetricsServiceRequest request;
    AddCounter(AddResource(request, {}), "big", 0, /*delta=*/true);
    request.mutable_resource_metrics(0)
        ->mutable_scope_metrics(0)
        ->mutable_metrics(0)
        ->mutable_sum()
        ->mutable_data_points(0)
        ->set_as_double(v);
    Post(request);
  }
  EXPECT_NE(Body().find("gpuscope_app_big_total{gpu=\"\",UUID=\"\"} 1e+308"), std::string::npos);
}

// A delta histogram without bounds (one +Inf bucket) lost its buckets on the first point.
TEST_F(StoreTest, ADeltaHistogramWithOnlyTheInfBucketKeepsIt) {
  for (int i = 0; i < 2; ++i) {
    pb::ExportMetricsServiceRequest request;
    AddHistogram(AddResource(request, {}), "one.bucket", "s", {}, {3}, 1.5, /*delta=*/true);
    EXPECT_FALSE(Post(request).has_partial_success());
  }
  EXPECT_NE(Body().find("gpuscope_app_one_bucket_seconds_bucket{gpu=\"\",UUID=\"\",le=\"+Inf\"} 6"),
            std::string::npos);
}

// Issue 39: a negative histogram sum made prometheus_client reject the whole OpenMetrics
// scrape. A histogram with a negative bound, or a negative sum, is written as its buckets alone.
TEST_F(StoreTest, AHistogramWithNegativeObservationsHasNoSum) {
  pb::ExportMetricsServiceRequest request;
  pb::ScopeMetrics* scope = AddResource(request, {});
  AddHistogram(scope, "skew", "s", {-1, 0, 1}, {2, 1, 0, 1}, -3.5);  // a negative bound
  AddHistogram(scope, "drift", "s", {0, 1}, {2, 0, 1}, -1.5);        // bounds >= 0, sum < 0
  AddHistogram(scope, "latency", "s", {0.1, 1}, {1, 1, 0}, 0.6);     // an ordinary one
  EXPECT_FALSE(Post(request).has_partial_success());
  const std::string body = Body();  // checked with OpenMetrics' rules for sums
  EXPECT_EQ(body.find("gpuscope_app_skew_seconds_sum"), std::string::npos) << body;
  EXPECT_EQ(body.find("gpuscope_app_skew_seconds_count"), std::string::npos);
  EXPECT_NE(body.find("gpuscope_app_skew_seconds_bucket{gpu=\"\",UUID=\"\",le=\"+Inf\"} 4"),
            std::string::npos);
  EXPECT_EQ(body.find("gpuscope_app_drift_seconds_sum"), std::string::npos);
  EXPECT_NE(body.find("gpuscope_app_latency_seconds_sum{gpu=\"\",UUID=\"\"} 0.6"),
            std::string::npos);
  EXPECT_NE(body.find("gpuscope_app_latency_seconds_count{gpu=\"\",UUID=\"\"} 2"),
            std::string::npos);
}

TEST_F(StoreTest, ExpiredSeriesGiveBackTheirBytesAndTheirNames) {
  pb::ExportMetricsServiceRequest request;
  AddHistogram(AddResource(request, {{"service.name", "s"}}), "clash", "", {1}, {1, 1}, 2);
  Post(request);
  EXPECT_GT(store_->bytes(), 0u);
  now_ += 3600;
  Body();
  EXPECT_EQ(store_->bytes(), 0u);
  EXPECT_FALSE(PostGauge("s", "clash.count").has_partial_success());
}

}  // namespace
}  // namespace gpuscope::otlp
