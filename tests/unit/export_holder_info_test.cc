// --attribution-labels info: GPU series keep only device labels, and one
// gpuscope_gpu_holder_info series per holder carries the attribution.
#include <gtest/gtest.h>

#include <set>

#include "export_test_util.h"

namespace gpuscope::prom {
namespace {

using testing::FullSnapshot;
using testing::Lines;

AttributionPtr Tenants(const Snapshot& snapshot, std::string_view job) {
  auto a = std::make_shared<Attribution>();
  a->holders[Attribution::DeviceKey(snapshot.gpus[0])] = {
      {"ml", "trainer-q7x4z", "main", "", "trainer"}};
  a->holders[Attribution::DeviceKey(snapshot.gpus[1])] = {{"inf", "api-b2c4d", "srv", "", "api"},
                                                          {"inf", "web-x2kq9", "srv", "", "web"}};
  a->holders[Attribution::DeviceKey(snapshot.gpus[2])] = {
      {"", "", "", std::string(job), std::string(job)}};
  return a;
}

RenderOptions InfoMode(MetricSet metrics = MetricSet::kBoth) {
  RenderOptions options = testing::AllCounters(metrics);
  options.attribution_labels = AttributionLabels::kInfo;
  return options;
}

// The series names and labels of a body (values dropped), without comments.
std::set<std::string> SeriesOf(const std::string& body) {
  std::set<std::string> series;
  for (const auto& line : Lines(body, "")) {
    if (line.empty() || line[0] == '#') continue;
    series.insert(line.substr(0, line.rfind(' ')));
  }
  return series;
}

TEST(RenderHolderInfo, ParsesMode) {
  EXPECT_EQ(ParseAttributionLabels("series"), AttributionLabels::kSeries);
  EXPECT_EQ(ParseAttributionLabels("info"), AttributionLabels::kInfo);
  EXPECT_FALSE(ParseAttributionLabels("Info"));
  EXPECT_EQ(RenderOptions{}.attribution_labels, AttributionLabels::kSeries);
}

TEST(RenderHolderInfo, GpuSeriesAreTheUnattributedOnes) {
  Snapshot snapshot = FullSnapshot(3);
  Snapshot attributed = snapshot;
  attributed.attribution = Tenants(snapshot, "4242");
  Renderer plain(testing::AllCounters(MetricSet::kBoth));
  Renderer info(InfoMode());
  std::set<std::string> expected = SeriesOf(*plain.Render(snapshot, {}, Format::kText));
  std::set<std::string> got = SeriesOf(*info.Render(attributed, {}, Format::kText));
  std::set<std::string> holders;
  for (auto it = got.begin(); it != got.end();) {
    if (it->starts_with("gpuscope_gpu_holder_info{")) {
      holders.insert(*it);
      it = got.erase(it);
    } else {
      ++it;
    }
  }
  EXPECT_EQ(got, expected);
  EXPECT_EQ(holders.size(), 4u);  // GPU 1 has two holders
}

TEST(RenderHolderInfo, OneInfoSeriesPerHolderWithNativeDeviceLabels) {
  Snapshot snapshot = FullSnapshot(3);
  snapshot.attribution = Tenants(snapshot, "4242");
  for (MetricSet metrics : {MetricSet::kBoth, MetricSet::kDcgm, MetricSet::kNative}) {
    Renderer renderer(InfoMode(metrics));
    const std::string body = *renderer.Render(snapshot, {}, Format::kText);
    const auto lines = Lines(body, "gpuscope_gpu_holder_info{");
    ASSERT_EQ(lines.size(), 4u);
    // In GPU order, each with the native prefix of its device, value 1.
    EXPECT_NE(lines[0].find("{gpu=\"0\",uuid=\"GPU-"), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(",namespace=\"ml\",pod=\"trainer-q7x4z\",container=\"main\","
                            "workload=\"trainer\"} 1"),
              std::string::npos)
        << lines[0];
    EXPECT_NE(lines[1].find("pod=\"api-b2c4d\""), std::string::npos) << lines[1];
    EXPECT_NE(lines[2].find("pod=\"web-x2kq9\""), std::string::npos) << lines[2];
    EXPECT_NE(lines[3].find(",hpc_job=\"4242\",workload=\"4242\"} 1"), std::string::npos)
        << lines[3];
    for (const auto& line : Lines(body, "")) {  // holder labels only on the info series
      if (line.find("workload=\"") == std::string::npos) continue;
      EXPECT_TRUE(line.starts_with("gpuscope_gpu_holder_info{")) << line;
    }
  }
}

TEST(RenderHolderInfo, ANewJobChangesOnlyTheInfoSeries) {
  Snapshot snapshot = FullSnapshot(3);
  snapshot.attribution = Tenants(snapshot, "4242");
  Renderer renderer(InfoMode());
  const std::set<std::string> before = SeriesOf(*renderer.Render(snapshot, {}, Format::kText));
  snapshot.attribution = Tenants(snapshot, "4243");
  const std::set<std::string> after = SeriesOf(*renderer.Render(snapshot, {}, Format::kText));
  std::set<std::string> added;
  for (const std::string& s : after) {
    if (!before.contains(s)) added.insert(s);
  }
  ASSERT_EQ(added.size(), 1u);
  EXPECT_NE(added.begin()->find("gpuscope_gpu_holder_info{gpu=\"2\""), std::string::npos);
  EXPECT_NE(added.begin()->find("hpc_job=\"4243\""), std::string::npos);
}

TEST(RenderHolderInfo, NoHoldersNoFamilyAndOpenMetricsInfoType) {
  Snapshot snapshot = FullSnapshot(3);
  Renderer renderer(InfoMode());
  EXPECT_EQ(renderer.Render(snapshot, {}, Format::kText)->find("gpuscope_gpu_holder_info"),
            std::string::npos);
  snapshot.attribution = Tenants(snapshot, "1");
  const std::string om = *renderer.Render(snapshot, {}, Format::kOpenMetrics);
  EXPECT_NE(om.find("# TYPE gpuscope_gpu_holder info\n"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::prom
