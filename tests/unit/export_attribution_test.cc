// Attribution labels on every per-GPU series: dcgm-exporter's names and order
// on DCGM families, namespace/pod/container/hpc_job/workload on native ones,
// one series per holder of a shared GPU.
#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "export_test_util.h"

namespace gpuscope::prom {
namespace {

using testing::FullSnapshot;
using testing::Lines;

AttributionPtr ThreeTenants(const Snapshot& snapshot) {
  auto a = std::make_shared<Attribution>();
  a->holders[Attribution::DeviceKey(snapshot.gpus[0])] = {
      {"ml", "trainer-q7x4z", "main", "", "trainer"}};
  a->holders[Attribution::DeviceKey(snapshot.gpus[1])] = {{"inf", "api-b2c4d", "srv", "", "api"},
                                                          {"inf", "web-x2kq9", "srv", "", "web"}};
  a->holders[Attribution::DeviceKey(snapshot.gpus[2])] = {{"", "", "", "4242", "4242"}};
  return a;
}

TEST(RenderAttribution, DcgmLabelsInDcgmExporterOrder) {
  Snapshot snapshot = FullSnapshot(3);
  snapshot.attribution = ThreeTenants(snapshot);
  Renderer renderer(RenderOptions{});
  const std::string body = *renderer.Render(snapshot, {}, Format::kText);
  const auto util = Lines(body, "DCGM_FI_DEV_GPU_UTIL{");
  ASSERT_EQ(util.size(), 4u);  // GPU 1 twice, once per pod
  // After the label fields of the counters file, as dcgm-exporter writes them.
  EXPECT_NE(util[0].find(",Hostname=\"node-1\",DCGM_FI_DRIVER_VERSION=\"570.133.20\","
                         "container=\"main\",namespace=\"ml\",pod=\"trainer-q7x4z\"}"),
            std::string::npos)
      << util[0];
  EXPECT_NE(util[1].find("pod=\"api-b2c4d\"}"), std::string::npos) << util[1];
  EXPECT_NE(util[2].find("pod=\"web-x2kq9\"}"), std::string::npos) << util[2];
  EXPECT_NE(util[3].find(",DCGM_FI_DRIVER_VERSION=\"570.133.20\",hpc_job=\"4242\"}"),
            std::string::npos)
      << util[3];
  // Both copies of the shared GPU carry its one value.
  EXPECT_EQ(util[1].substr(util[1].rfind(' ')), util[2].substr(util[2].rfind(' ')));
}

TEST(RenderAttribution, NativeLabelsOnEveryPerGpuFamily) {
  Snapshot snapshot = FullSnapshot(3);
  snapshot.attribution = ThreeTenants(snapshot);
  RenderOptions every_series;  // per-link NVLink series of a first render included
  every_series.profile = Profile::kFull;
  Renderer renderer(every_series);
  Family extra{"gpuscope_test_extra",
               "help",
               FamilyType::kGauge,
               LabelBase::kNative,
               {{1, {{"check", "x"}}, 1}}};
  const std::string body = *renderer.Render(snapshot, std::span(&extra, 1), Format::kText);
  for (std::string_view family :
       {"gpuscope_gpu_info{gpu=\"1\"", "gpuscope_gpu_lost{gpu=\"1\"",
        "gpuscope_nvlink_link_active{gpu=\"1\"", "gpuscope_xid_errors_total{gpu=\"1\"",
        "gpuscope_test_extra{gpu=\"1\""}) {
    const auto lines = Lines(body, family);
    ASSERT_FALSE(lines.empty()) << family;
    size_t api = 0, web = 0;
    for (const auto& line : lines) {
      api += line.find("namespace=\"inf\",pod=\"api-b2c4d\",container=\"srv\",workload=\"api\"") !=
             std::string::npos;
      web += line.find("pod=\"web-x2kq9\",container=\"srv\",workload=\"web\"") != std::string::npos;
    }
    EXPECT_EQ(api, lines.size() / 2) << family;
    EXPECT_EQ(web, lines.size() / 2) << family;
  }
  const auto lost = Lines(body, "gpuscope_gpu_lost{gpu=\"2\"");
  ASSERT_EQ(lost.size(), 1u);
  EXPECT_NE(lost[0].find(",hpc_job=\"4242\",workload=\"4242\"}"), std::string::npos) << lost[0];
}

TEST(RenderAttribution, SeriesStayUniqueAndChangesTakeEffect) {
  Snapshot snapshot = FullSnapshot(3);
  snapshot.attribution = ThreeTenants(snapshot);
  Renderer renderer(testing::AllCounters(MetricSet::kBoth));
  const std::string body = *renderer.Render(snapshot, {}, Format::kText);
  std::set<std::string> series;
  size_t count = 0;
  for (const auto& line : Lines(body, "")) {
    if (line.empty() || line[0] == '#') continue;
    series.insert(line.substr(0, line.rfind(' ')));
    ++count;
  }
  EXPECT_EQ(series.size(), count);
  // Attribution gone (the kubelet went away): plain labels again, same values.
  snapshot.attribution = nullptr;
  const std::string plain = *renderer.Render(snapshot, {}, Format::kText);
  EXPECT_EQ(plain.find("pod=\""), std::string::npos);
  Renderer fresh(testing::AllCounters(MetricSet::kBoth));
  EXPECT_EQ(plain, *fresh.Render(snapshot, {}, Format::kText));
}

}  // namespace
}  // namespace gpuscope::prom
