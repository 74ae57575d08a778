// The web API's parameter checks and window JSON (src/web/api.h, params.h) on
// a hand-built snapshot: a whole GPU 0 and GPU 1 split into two MIG instances.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "health/checks.h"
#include "web/api.h"
#include "web/assets.h"
#include "web/params.h"

namespace gpuscope::web {
namespace {

Snapshot TwoGpus() {
  Snapshot s;
  s.timestamp = 1000;
  GpuInfo gpu0;
  gpu0.index = 0;
  gpu0.name = "NVIDIA H100 80GB HBM3";
  GpuInfo mig_a = gpu0, mig_b = gpu0;
  mig_a.index = mig_b.index = 1;
  mig_a.gpu_instance_id = 1;
  mig_a.mig_profile = "3g.40gb";
  mig_b.gpu_instance_id = 2;
  mig_b.mig_profile = "1g.10gb";
  s.gpus = {gpu0, mig_a, mig_b};
  s.samples.resize(3);
  s.samples[0].Set(Metric::kGpuTemp, 55);
  return s;
}

http::Request Query(std::vector<std::pair<std::string_view, std::string_view>> q) {
  http::Request r;
  r.method = "GET";
  r.path = "/api/v1/window";
  r.query = std::move(q);
  return r;
}

TEST(WebParams, SelectsWholeGpusAndMigInstances) {
  Snapshot s = TwoGpus();
  EXPECT_EQ(*SelectDevices("0", "", s, false), (std::vector<std::size_t>{0}));
  EXPECT_EQ(*SelectDevices("1", "2", s, false), (std::vector<std::size_t>{2}));
  EXPECT_EQ(*SelectDevices("all", "", s, true), (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(SelectDevices("1", "", s, false).status().message(),
            "gi: GPU 1 is split into MIG instances: add gi= one of 1, 2");
  EXPECT_EQ(SelectDevices("1", "7", s, false).status().message(),
            "gi: GPU 1 has no GPU instance '7' (it has 1, 2)");
  EXPECT_EQ(SelectDevices("2", "", s, false).status().message(),
            "gpu: no GPU 2 on this node (it has 0, 1)");
  EXPECT_EQ(SelectDevices("all", "", s, false).status().message(),
            "gpu: 'all' is not a GPU index (this node has 0, 1)");
  EXPECT_FALSE(SelectDevices("-1", "", s, true).ok());
  EXPECT_FALSE(SelectDevices("0x1", "", s, true).ok());
  EXPECT_FALSE(SelectDevices("1", "1.0", s, true).ok());
}

// id= takes `gpuscope diagnose -i`'s list and selects as it does locally.
TEST(WebParams, SelectsSmiIdsAsTheCommandLineDoes) {
  Snapshot s = TwoGpus();
  s.gpus[2].mig_uuid = "MIG-b";
  EXPECT_EQ(*SelectSmiIds("0", s), (std::vector<std::size_t>{0}));
  EXPECT_EQ(*SelectSmiIds("MIG-b,0", s), (std::vector<std::size_t>{0, 2}));
  Result<std::vector<std::size_t>> none = SelectSmiIds("9", s);
  EXPECT_EQ(none.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(none.status().message(), "id: no GPU matches id \"9\"");
  EXPECT_EQ(SelectSmiIds("0,", s).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(SelectSmiIds("0\n<b>", s).status().message(), "id: '0?<b>' is not a list of GPU ids");
}

// /api/v1/health?id= narrows as `gpuscope health -i` does: a MIG UUID names its GPU.
TEST(WebHealth, NarrowsToTheGpusOfId) {
  Snapshot s = TwoGpus();
  s.gpus[2].mig_uuid = "MIG-b";
  auto report = std::make_shared<health::HealthReport>();
  report->gpus.resize(2);
  report->gpus[1].gpu = 1;
  report->gpus[1].verdict = health::Verdict::kWarn;
  report->verdict = health::Verdict::kWarn;
  View view;
  view.snapshot = std::make_shared<const Snapshot>(s);
  view.health = report;
  auto body = [&](std::vector<std::pair<std::string_view, std::string_view>> q) {
    http::Request r = Query(std::move(q));
    r.path = "/api/v1/health";
    return HealthBody(r, view);
  };
  Result<std::string> mig = body({{"id", "MIG-b"}});
  ASSERT_TRUE(mig.ok()) << mig.status().message();
  const nlohmann::json doc = nlohmann::json::parse(*mig);
  ASSERT_EQ(doc["gpus"].size(), 1u);
  EXPECT_EQ(doc["gpus"][0]["gpu"], 1);
  EXPECT_EQ(doc["verdict"], "warn");
  Result<std::string> zero = body({{"id", "0"}});
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(nlohmann::json::parse(*zero)["verdict"], "ok");  // judged over GPU 0 alone
  EXPECT_EQ(body({{"id", "MIG-c"}}).status().message(), "id: no GPU matches id \"MIG-c\"");
  EXPECT_EQ(body({{"id", "MIG-c"}}).status().code(), Status::Code::kNotFound);
  EXPECT_EQ(body({{"id", "0,"}}).status().code(), Status::Code::kInvalidArgument);
  EXPECT_EQ(body({{"gpu", "0"}}).status().message(),
            "unknown parameter 'gpu' (this endpoint takes: id)");
  EXPECT_EQ(body({{"id", std::string(5000, '0')}}).status().code(),
            Status::Code::kInvalidArgument);  // bounded: no work for a huge list
}

TEST(WebParams, QuotesOutsideTextSafely) {
  http::Request r = Query({{"gpu\n<b>", "0"}});
  Status st = CheckParameters(r, {"gpu"});
  EXPECT_EQ(st.message(), "unknown parameter 'gpu?<b>' (this endpoint takes: gpu)");
}

TEST(WebWindow, ParsesAndRejects) {
  Snapshot s = TwoGpus();
  Result<WindowQuery> q = ParseWindowQuery(
      Query({{"gpu", "0"}, {"metrics", "gpu_util,gpu_temp,gpu_util"}, {"since", "900.5"}}), s);
  ASSERT_TRUE(q.ok()) << q.status().message();
  EXPECT_EQ(q->metrics, (std::vector<Metric>{Metric::kGpuUtil, Metric::kGpuTemp}));
  EXPECT_EQ(q->since, 900.5);
  EXPECT_FALSE(q->all);
  EXPECT_FALSE(ParseWindowQuery(Query({{"gpu", "0"}, {"metrics", ""}}), s).ok());
  EXPECT_FALSE(ParseWindowQuery(Query({{"gpu", "0"}, {"metrics", "gpu_util,"}}), s).ok());
  EXPECT_FALSE(
      ParseWindowQuery(Query({{"gpu", "0"}, {"metrics", "gpu_util"}, {"since", "nan"}}), s).ok());
  EXPECT_FALSE(
      ParseWindowQuery(Query({{"gpu", "0"}, {"metrics", "gpu_util"}, {"step", "1"}}), s).ok());
}

TEST(WebWindow, PointsAfterSinceWithGapsAsNull) {
  Snapshot s = TwoGpus();
  Window window({600, 1});
  for (int i = 0; i < 4; ++i) {
    WindowPoint p;
    p.t = 990 + i;
    p.values[Index(Metric::kGpuUtil)] = 10.5f * i;
    if (i != 2) p.present.set(Index(Metric::kGpuUtil));
    window.Append(0, p);
  }
  Result<WindowQuery> q =
      ParseWindowQuery(Query({{"gpu", "0"}, {"metrics", "gpu_util"}, {"since", "990"}}), s);
  ASSERT_TRUE(q.ok());
  auto j = nlohmann::json::parse(WindowJson(window, s, *q, AgentInfo{}));
  EXPECT_EQ(j["t"], nlohmann::json::parse("[991,992,993]"));
  EXPECT_EQ(j["series"]["gpu_util"], nlohmann::json::parse("[10.5,null,31.5]"));
  EXPECT_EQ(j["slot"], 0);
  q = ParseWindowQuery(Query({{"gpu", "all"}, {"metrics", "gpu_temp"}}), s);
  ASSERT_TRUE(q.ok());
  j = nlohmann::json::parse(WindowJson(window, s, *q, AgentInfo{}));
  ASSERT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["devices"][2]["gpu_instance_id"], 2);
  EXPECT_EQ(j["devices"][1]["t"].size(), 0u);
}

TEST(WebGpus, DevicesWithValuesAndNoDataYet) {
  View view;
  view.snapshot = std::make_shared<const Snapshot>(TwoGpus());
  auto j = nlohmann::json::parse(GpusJson(view, AgentInfo{"0.1.0", "sim", "both", 1, 600}));
  ASSERT_EQ(j["devices"].size(), 3u);
  EXPECT_EQ(j["devices"][0]["values"]["gpu_temp"], 55);
  EXPECT_FALSE(j["devices"][0]["values"].contains("gpu_util"));  // absent, never 0
  EXPECT_EQ(j["devices"][1]["mig"]["profile"], "3g.40gb");
  EXPECT_TRUE(j["devices"][0]["health"].is_null());
  EXPECT_TRUE(j["devices"][0]["bottleneck"].is_null());
  EXPECT_EQ(j["clock_reasons"][0]["reason"], "gpu_idle");
  EXPECT_EQ(j["devices"][2]["kpis"].size(), 0u);
}

TEST(WebGpus, KpisUnderTheirDevice) {
  View view;
  view.snapshot = std::make_shared<const Snapshot>(TwoGpus());
  const std::vector<KpiReading> kpis = {
      {2, {"step_duration", "app_step_duration_seconds", "train", 40, 10}}};
  view.kpis = kpis;
  auto j = nlohmann::json::parse(GpusJson(view, AgentInfo{}));
  EXPECT_EQ(j["devices"][0]["kpis"].size(), 0u);
  ASSERT_EQ(j["devices"][2]["kpis"].size(), 1u);
  EXPECT_EQ(j["devices"][2]["kpis"][0]["kpi"], "step_duration");
  EXPECT_EQ(j["devices"][2]["kpis"][0]["count"], 40);
  EXPECT_EQ(j["devices"][2]["kpis"][0]["sum"], 10);
}

TEST(WebAssets, PageAndUplotEmbedded) {
  const Asset* page = FindAsset("/ui/index.html");
  ASSERT_NE(page, nullptr);
  EXPECT_NE(page->data.find("/ui/app.js?v=" + std::string(kAssetVersion)), std::string::npos);
  EXPECT_EQ(page->data.find("@VERSION@"), std::string::npos);
  const Asset* uplot = FindAsset("/ui/uPlot.min.js");
  ASSERT_NE(uplot, nullptr);
  EXPECT_NE(uplot->data.find("uPlot"), std::string::npos);
  EXPECT_EQ(FindAsset("/ui/nope.js"), nullptr);
}

// Every asset also comes gzipped from the build (nothing is compressed at start-up); the
// integration test test_web_api checks that it inflates to the plain bytes.
TEST(WebAssets, EachAssetIsEmbeddedGzipped) {
  for (const Asset& asset : kAssets) {
    ASSERT_GE(asset.gzipped.size(), 18u) << asset.path;
    EXPECT_EQ(static_cast<unsigned char>(asset.gzipped[0]), 0x1f) << asset.path;  // gzip magic
    EXPECT_EQ(static_cast<unsigned char>(asset.gzipped[1]), 0x8b) << asset.path;
    if (asset.content_type.starts_with("text/") && asset.data.size() > 1000) {
      EXPECT_LT(asset.gzipped.size() * 2, asset.data.size()) << asset.path;
    }
  }
}

}  // namespace
}  // namespace gpuscope::web
