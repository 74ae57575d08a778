#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "health/families.h"
#include "health/report.h"
#include "health_test_util.h"

namespace gpuscope::health {
namespace {

using testing::HealthyNode;
using testing::kNow;

HealthReport Judge(const Snapshot& snap, const EventState& events = {}) {
  HealthState state;
  return Evaluate(snap, events, state, kNow);
}

TEST(FormatReport, HealthyNodeIsShortAndExitsZero) {
  EventState events;
  events.running = true;
  HealthReport r = Judge(HealthyNode(2), events);
  const std::string text = FormatReport(r);
  EXPECT_NE(text.find("node-a: OK (2 GPUs: 2 ok, 0 warn, 0 fail)"), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 0 NVIDIA H100 80GB HBM3 00000000:10:00.0 (GPU-00000000): OK"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("what to do"), std::string::npos) << text;
  EXPECT_EQ(text.find("event thread is not running"), std::string::npos);
  EXPECT_EQ(r.verdict, Verdict::kOk);
}

TEST(FormatReport, FailingGpuShowsEvidenceAndAction) {
  Snapshot snap = HealthyNode(2);
  snap.samples[1].Set(Metric::kEccDbeVolatile, 3);
  snap.samples[0].Set(Metric::kGpuTemp, 85);
  HealthReport r = Judge(snap);
  const std::string text = FormatReport(r);
  EXPECT_NE(text.find("node-a: FAIL (2 GPUs: 0 ok, 1 warn, 1 fail)"), std::string::npos) << text;
  EXPECT_NE(text.find("memory   FAIL"), std::string::npos) << text;
  EXPECT_NE(text.find("- uncorrectable (double-bit) ECC errors since the driver loaded: 3"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("what to do: Drain the GPU, reset it"), std::string::npos) << text;
  EXPECT_NE(text.find("thermal  WARN"), std::string::npos) << text;
  EXPECT_NE(text.find("event thread is not running"), std::string::npos);
  EXPECT_EQ(r.verdict, Verdict::kFail);
}

TEST(FormatReport, WarningsWarn) {
  Snapshot snap = HealthyNode(1);
  snap.samples[0].Set(Metric::kRemappedPending, 1);
  HealthReport r = Judge(snap);
  EXPECT_EQ(r.verdict, Verdict::kWarn);  // the exit code: cli::HealthExit
}

// A GPU lost before its first read was never described: the line says so
// instead of printing empty model, bus id and "()" for the UUID.
TEST(FormatReport, GpuLostBeforeFirstReadSaysIdentityUnknown) {
  Snapshot snap = HealthyNode(2);
  snap.gpus[1] = GpuInfo{};
  snap.gpus[1].index = 1;
  snap.samples[1] = GpuSample{};
  snap.samples[1].state = GpuState::kLost;
  snap.samples[1].state_reason = "GPU is lost (NVML_ERROR_GPU_IS_LOST)";
  HealthReport r = Judge(snap);
  const std::string text = FormatReport(r);
  EXPECT_NE(text.find("GPU 1 (identity unknown: lost before first read): FAIL\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("()"), std::string::npos) << text;
  EXPECT_EQ(text.find("GPU 1  "), std::string::npos) << text;
  EXPECT_NE(text.find("GPU 0 NVIDIA H100 80GB HBM3 00000000:10:00.0 (GPU-00000000): OK"),
            std::string::npos)
      << text;
}

TEST(FormatReport, NvmlDown) {
  Snapshot snap;
  snap.nvml_up = false;
  snap.nvml_error = "NVIDIA driver is not loaded";
  HealthReport r = Judge(snap);
  const std::string text = FormatReport(r);
  EXPECT_NE(text.find("NVML is down: NVIDIA driver is not loaded"), std::string::npos) << text;
  EXPECT_EQ(r.verdict, Verdict::kFail);
}

TEST(FormatJson, CarriesVerdictsEvidenceAndXids) {
  Snapshot snap = HealthyNode(2);
  snap.samples[1].state = GpuState::kLost;
  EventState events;
  events.running = true;
  events.gpus[1].xid_counts = {{79, 1}};
  events.gpus[1].recent = {{kNow - 1, 79}};
  events.gpus[1].last_xid = 79;
  const nlohmann::json j = nlohmann::json::parse(FormatJson(Judge(snap, events)));
  EXPECT_EQ(j["verdict"], "fail");
  EXPECT_EQ(j["hostname"], "node-a");
  ASSERT_EQ(j["gpus"].size(), 2u);
  EXPECT_EQ(j["gpus"][0]["verdict"], "ok");
  EXPECT_FALSE(j["gpus"][0]["checks"].contains("nvlink"));  // not evaluated: omitted
  const auto& g1 = j["gpus"][1];
  EXPECT_EQ(g1["lost"], true);
  EXPECT_EQ(g1["checks"]["driver"]["verdict"], "fail");
  EXPECT_EQ(g1["checks"]["xid"]["verdict"], "fail");
  EXPECT_FALSE(g1["checks"]["xid"]["action"].get<std::string>().empty());
  EXPECT_EQ(g1["xid"]["total"]["79"], 1);
  EXPECT_EQ(g1["xid"]["window"]["79"], 1);
  EXPECT_EQ(g1["xid"]["last"], 79);
  EXPECT_TRUE(j["gpus"][0]["xid"]["last"].is_null());
}

const prom::Family* FindFamily(const std::vector<prom::Family>& fams, const std::string& name) {
  for (const prom::Family& f : fams) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

TEST(ToFamilies, VerdictPerEvaluatedCheckAndStaleness) {
  Snapshot snap = HealthyNode(2);
  snap.samples[1].Set(Metric::kEccDbeVolatile, 1);
  snap.samples[0].state = GpuState::kStale;
  const auto fams = ToFamilies(Judge(snap));
  const prom::Family* health = FindFamily(fams, "gpuscope_gpu_health");
  ASSERT_NE(health, nullptr);
  EXPECT_EQ(health->type, prom::FamilyType::kGauge);
  EXPECT_EQ(health->base, prom::LabelBase::kNative);
  // memory, pcie, thermal, power, driver per GPU (no NVLink data, no events).
  EXPECT_EQ(health->samples.size(), 10u);
  bool found = false;
  for (const prom::Sample& s : health->samples) {
    if (s.gpu == 1 && s.labels == prom::Labels{{"check", "memory"}}) {
      EXPECT_EQ(s.value, 2);
      found = true;
    }
    EXPECT_NE(s.labels[0].second, "nvlink");
  }
  EXPECT_TRUE(found);
  const prom::Family* stale = FindFamily(fams, "gpuscope_collector_stale");
  ASSERT_NE(stale, nullptr);
  ASSERT_EQ(stale->samples.size(), 2u);
  EXPECT_EQ(stale->samples[0].value, 1);
  EXPECT_EQ(stale->samples[1].value, 0);
  // The exporter renders these itself from the snapshot.
  EXPECT_EQ(FindFamily(fams, "gpuscope_gpu_lost"), nullptr);
  EXPECT_EQ(FindFamily(fams, "gpuscope_xid_errors_total"), nullptr);
  EXPECT_EQ(FindFamily(fams, "DCGM_EXP_XID_ERRORS_COUNT"), nullptr);  // not enabled
}

TEST(ToFamilies, DcgmXidWindowCountWhenEnabled) {
  EventState events;
  events.gpus[0].recent = {{kNow - 2, 13}, {kNow - 1, 13}, {kNow, 48}};
  HealthReport r = Judge(HealthyNode(1), events);
  FamilyOptions options;
  options.xid_count_window = true;
  const auto fams = ToFamilies(r, options);
  const prom::Family* w = FindFamily(fams, "DCGM_EXP_XID_ERRORS_COUNT");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->base, prom::LabelBase::kDcgm);
  ASSERT_EQ(w->samples.size(), 2u);
  EXPECT_EQ(w->samples[0].labels, (prom::Labels{{"xid", "13"}, {"window_size_in_ms", "300000"}}));
  EXPECT_EQ(w->samples[0].value, 2);
  EXPECT_EQ(w->samples[1].labels[0].second, "48");
}

TEST(ApplyEvents, CopiesCountsAndLastXidToWholeGpus) {
  Snapshot snap = HealthyNode(3);
  GpuInfo mig = snap.gpus[0];
  mig.gpu_instance_id = 3;
  snap.gpus.push_back(mig);
  snap.samples.emplace_back();
  EventState events;
  events.gpus[0].xid_counts = {{13, 4}, {79, 1}};
  events.gpus[0].last_xid = 79;
  events.gpus[1].registered_mask = 0x8;  // registered, nothing seen yet
  ApplyEvents(events, snap);
  EXPECT_EQ(snap.samples[0].xid_counts.at(13), 4u);
  EXPECT_EQ(snap.samples[0].Find(Metric::kXidLast), 79);
  EXPECT_EQ(snap.samples[1].Find(Metric::kXidLast), 0);  // dcgm-exporter shows 0 until an XID
  EXPECT_FALSE(snap.samples[2].Has(Metric::kXidLast));   // unknown to the event thread
  EXPECT_TRUE(snap.samples[3].xid_counts.empty());       // MIG instance: not duplicated
}

}  // namespace
}  // namespace gpuscope::health
