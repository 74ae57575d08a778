#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "health/report.h"
#include "health/report_json.h"
#include "health_test_util.h"

namespace gpuscope::health {
namespace {

using testing::HealthyNode;
using testing::kNow;

// A node with a failing and a warning GPU, holders, processes and XIDs: every
// part FormatReport prints.
HealthReport Eventful() {
  Snapshot snap = HealthyNode(3);
  snap.samples[1].Set(Metric::kEccDbeVolatile, 3);
  snap.samples[0].Set(Metric::kGpuTemp, 85);
  HealthState state;
  EventState events;
  events.running = true;
  HealthReport r = Evaluate(snap, events, state, kNow);
  r.gpus[0].holders = {Holder{"ml", "train-0", "main", "", "train"}};
  r.gpus[0].processes = {{3100, "python3", Holder{"ml", "train-0", "main", "", "train"}}};
  r.gpus[2].xid_totals = {{79, 2}, {13, 1}};
  r.gpus[2].xid_window = {{79, 1}};
  r.gpus[2].last_xid = 79;
  return r;
}

// What `health --agent` prints is what `health` prints: the text, the JSON
// and what the exit code is judged from (cli::HealthExit) survive the trip
// through /api/v1/health.
TEST(ParseJson, ReadsBackWhatFormatJsonWrote) {
  const HealthReport r = Eventful();
  Result<HealthReport> back = ParseJson(FormatJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(FormatReport(*back), FormatReport(r));
  EXPECT_EQ(FormatReport(*back, {.verbose = true}), FormatReport(r, {.verbose = true}));
  EXPECT_EQ(FormatJson(*back), FormatJson(r));
  EXPECT_EQ(back->nvml_up, r.nvml_up);
  EXPECT_EQ(back->verdict, r.verdict);
  ASSERT_EQ(back->gpus.size(), r.gpus.size());
  for (std::size_t i = 0; i < r.gpus.size(); ++i) EXPECT_EQ(back->gpus[i].lost, r.gpus[i].lost);
}

TEST(ParseJson, NvmlDownKeepsItsError) {
  HealthReport r;
  r.hostname = "node-a";
  r.nvml_up = false;
  r.nvml_error = "Driver Not Loaded";
  r.verdict = Verdict::kFail;
  Result<HealthReport> back = ParseJson(FormatJson(r));
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(FormatReport(*back), FormatReport(r));
  EXPECT_FALSE(back->nvml_up);
}

TEST(ParseJson, BadAnswersNameTheField) {
  EXPECT_FALSE(ParseJson("<html>").ok());
  EXPECT_FALSE(ParseJson("[" + std::string(100, '[')).ok());
  nlohmann::json doc = nlohmann::json::parse(FormatJson(Eventful()));
  doc["gpus"][1]["verdict"] = "bad";
  Result<HealthReport> r = ParseJson(doc.dump());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("gpus[1]"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("verdict"), std::string::npos) << r.status().message();
  doc = nlohmann::json::parse(FormatJson(Eventful()));
  doc["gpus"][0]["gpu"] = -1;
  EXPECT_FALSE(ParseJson(doc.dump()).ok());
  doc = nlohmann::json::parse(FormatJson(Eventful()));
  doc["gpus"][2]["xid"]["total"]["x"] = 1;
  EXPECT_FALSE(ParseJson(doc.dump()).ok());
}

// A hostile agent cannot drive the terminal or fake a line of the report.
TEST(ParseJson, TextIsSafeToPrint) {
  nlohmann::json doc = nlohmann::json::parse(FormatJson(Eventful()));
  doc["hostname"] = "node\x1b]0;owned\x07";
  doc["gpus"][1]["checks"]["memory"]["evidence"][0] = "fine\nGPU 9: OK";
  Result<HealthReport> r = ParseJson(doc.dump());
  ASSERT_TRUE(r.ok()) << r.status().message();
  const std::string text = FormatReport(*r);
  EXPECT_EQ(text.find('\x1b'), std::string::npos) << text;
  EXPECT_EQ(text.find("\nGPU 9"), std::string::npos) << text;
}

// `health -i` judges only the GPUs it names; so does the agent's report narrowed.
TEST(KeepGpus, NarrowsAndJudgesTheNodeOverTheKept) {
  HealthReport r = Eventful();
  ASSERT_EQ(r.verdict, Verdict::kFail);
  KeepGpus(r, {2, 0});
  ASSERT_EQ(r.gpus.size(), 2u);
  EXPECT_EQ(r.gpus[0].gpu, 0u);  // in index order, as sampled
  EXPECT_EQ(r.gpus[1].gpu, 2u);
  EXPECT_EQ(r.verdict, Verdict::kWarn);
}

}  // namespace
}  // namespace gpuscope::health
