// Whatever an application posts over OTLP, /metrics stays valid (issue 31,
// finding 7): a hostile mix of names, values and labels is posted to the
// receiver, the store's families are rendered by the exporter's Renderer, and
// the body is checked by the in-process checker and by the real
// `promtool check metrics`.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>

#include "export/render.h"
#include "export_test_util.h"
#include "exposition_check.h"
#include "otlp/receiver.h"
#include "otlp/store.h"
#include "otlp_test_util.h"
#include "promtool_util.h"
#include "test_need.h"

namespace gpuscope::otlp {
namespace {

using testing::AddCounter;
using testing::AddGauge;
using testing::AddHistogram;
using testing::AddResource;
using testing::Attr;

// Every finding of issue 31's /metrics part in one request per sender.
pb::ExportMetricsServiceRequest Hostile(int sender) {
  pb::ExportMetricsServiceRequest request;
  pb::ScopeMetrics* s = AddResource(
      request, {{"service.name", "evil\"\\\n" + std::to_string(sender)}, {"host.name", "node-1"}});
  AddHistogram(s, "clash", "", {1}, {1, 1}, 2);
  AddGauge(s, "clash.count", 5);
  AddGauge(s, "clash_sum", 5);
  AddHistogram(s, "inf.bound", "s", {1, INFINITY}, {1, 1, 1}, 1);
  AddHistogram(s, "bad.count", "s", {1}, {1, 1}, 1)->set_count(9);
  AddHistogram(s, "no.bounds", "s", {}, {4}, 1, /*delta=*/true);
  AddCounter(s, "negative", -1);
  AddCounter(s, "nan.counter", 0);
  s->mutable_metrics()->rbegin()->mutable_sum()->mutable_data_points(0)->set_as_double(NAN);
  AddGauge(s, "step.duration.seconds", 1);
  AddGauge(s, "hits", 1);
  AddCounter(s, "hits", 2);
  AddGauge(s, "weird name/\xe2\x82\xac", INFINITY);
  pb::Metric* labelled = s->add_metrics();
  labelled->set_name("labelled");
  pb::NumberDataPoint* dp = labelled->mutable_gauge()->add_data_points();
  dp->set_as_double(NAN);
  for (const char* key : {"le", "__name__", "gpu", "a.b", "a_b", "9lives", ""}) {
    Attr(dp->mutable_attributes(), key, "v\"\\\n\t\x01");
  }
  Attr(dp->mutable_attributes(), "huge", std::string(64 * 1024, 'x'));
  return request;
}

TEST(OtlpPromtool, HostileKpiDataLeavesMetricsValid) {
  GPUSCOPE_NEED(test_support::HavePromtool(), "promtool not installed (Debian package prometheus)");
  Store store({.max_series = 50});
  double steady = 0;
  Receiver receiver(
      ReceiverOptions{}, store, [&] { return steady += 1; }, [] { return 1000.0; });
  for (int sender = 0; sender < 4; ++sender) {
    testing::Post(receiver, Hostile(sender));
    testing::Post(receiver, Hostile(sender));  // updates, deltas added up
  }
  pb::ExportMetricsServiceRequest real;
  pb::ScopeMetrics* scope = AddResource(real, {{"service.name", "trainer"}});
  AddHistogram(scope, "training.step.duration", "s", {0.5, 1}, {3, 1, 0}, 1.9);
  EXPECT_FALSE(testing::Post(receiver, real).has_partial_success());
  std::vector<prom::Family> families = store.Families(prom::testing::FullSnapshot(2), 1000);
  prom::Renderer renderer(prom::testing::AllCounters(prom::MetricSet::kNative));
  const prom::Bodies bodies = renderer.Render(prom::testing::FullSnapshot(2), families);
  const std::string& text = *bodies.text;
  ASSERT_NE(text.find("gpuscope_app_step_duration_seconds_bucket{"), std::string::npos);
  ASSERT_NE(text.find("gpuscope_app_clash_bucket{"), std::string::npos);
  EXPECT_EQ(gpuscope::testing::ExpositionChecker::Problem(text), "");
  const test_support::Lint lint = test_support::RunPromtool(text);
  EXPECT_EQ(lint.exit_code, 0) << lint.output;
  EXPECT_EQ(lint.output, "");
  // OpenMetrics declares a counter without `_total`: still one declaration per name.
  std::set<std::string> declared;
  const std::string& om = *bodies.openmetrics;
  for (std::size_t at = om.find("# TYPE "); at != std::string::npos;
       at = om.find("# TYPE ", at + 1)) {
    const std::size_t start = at + 7;
    const std::string name = om.substr(start, om.find(' ', start) - start);
    EXPECT_TRUE(declared.insert(name).second) << name;
  }
}

}  // namespace
}  // namespace gpuscope::otlp
