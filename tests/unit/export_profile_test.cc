// The lean profile (export/profile.h): full-only rows left out, sparse rows
// and families shown once non-zero and kept, per-link NVLink series only for
// links that are down or counted an error; the full profile keeps everything.
#include <gtest/gtest.h>

#include <string>

#include "export/render.h"
#include "export_test_util.h"

namespace gpuscope::prom {
namespace {

RenderOptions Lean() {
  RenderOptions options;
  options.metrics = MetricSet::kNative;
  return options;
}

// One H100 with every metric at zero, 18 healthy links without errors.
Snapshot QuietSnapshot() {
  Snapshot snapshot = testing::FullSnapshot(1);
  GpuSample& sample = snapshot.samples[0];
  for (std::size_t m = 0; m < kMetricCount; ++m) sample.Set(static_cast<Metric>(m), 0);
  sample.Set(Metric::kGpuTemp, 40);
  for (NvLinkLink& link : sample.nvlink) link = {link.link, true, 0, 0, 0, 0};
  sample.xid_counts.clear();
  return snapshot;
}

bool Has(const std::string& body, const std::string& text) {
  return body.find(text) != std::string::npos;
}

std::size_t Count(const std::string& body, const std::string& text) {
  std::size_t n = 0;
  for (std::size_t at = body.find(text); at != std::string::npos; at = body.find(text, at + 1)) {
    ++n;
  }
  return n;
}

TEST(Profile, Parses) {
  EXPECT_EQ(ParseProfile("lean"), Profile::kLean);
  EXPECT_EQ(ParseProfile("full"), Profile::kFull);
  EXPECT_FALSE(ParseProfile("default"));
  EXPECT_EQ(RenderOptions{}.profile, Profile::kLean);
}

TEST(Profile, LeanLeavesOutFullOnlyRows) {
  Renderer lean(Lean());
  std::string body = *lean.Render(QuietSnapshot()).text;
  EXPECT_TRUE(Has(body, "gpuscope_gpu_temperature_celsius{"));
  EXPECT_TRUE(Has(body, "gpuscope_nvlink_errors_total{"));  // the per-GPU totals always
  EXPECT_FALSE(Has(body, "gpuscope_graphics_engine_active_ratio{"));
  EXPECT_FALSE(Has(body, "gpuscope_clock_violation_seconds_total{"));
  EXPECT_FALSE(Has(body, "gpuscope_gpu_last_sample_timestamp_seconds{"));
  RenderOptions full = Lean();
  full.profile = Profile::kFull;
  std::string all = *Renderer(full).Render(QuietSnapshot()).text;
  EXPECT_TRUE(Has(all, "gpuscope_graphics_engine_active_ratio{"));
  EXPECT_TRUE(Has(all, "gpuscope_gpu_last_sample_timestamp_seconds{"));
  EXPECT_EQ(Count(all, "gpuscope_nvlink_link_errors_total{"), 18u * 4);
  EXPECT_EQ(Count(all, "gpuscope_ecc_errors_total{"), 4u);
}

TEST(Profile, SparseRowAppearsOnceNonZeroAndStays) {
  Renderer renderer(Lean());
  Snapshot snapshot = QuietSnapshot();
  EXPECT_FALSE(Has(*renderer.Render(snapshot).text, "gpuscope_remapped_rows_pending{"));
  EXPECT_FALSE(Has(*renderer.Render(snapshot).text, "gpuscope_ecc_errors_total{"));
  snapshot.samples[0].Set(Metric::kRemappedPending, 1);
  snapshot.samples[0].Set(Metric::kEccDbeVolatile, 2);
  std::string body = *renderer.Render(snapshot).text;
  EXPECT_TRUE(Has(body, "gpuscope_remapped_rows_pending{gpu=\"0\"") && Has(body, "\"} 1\n"));
  EXPECT_EQ(Count(body, "gpuscope_ecc_errors_total{"), 1u);  // only the non-zero one
  snapshot.samples[0].Set(Metric::kRemappedPending, 0);
  body = *renderer.Render(snapshot).text;
  std::size_t at = body.find("gpuscope_remapped_rows_pending{");
  ASSERT_NE(at, std::string::npos) << "a shown sparse series must stay";
  EXPECT_EQ(body.substr(body.find("} ", at), 4), "} 0\n");
}

TEST(Profile, PerLinkNvLinkOnlyForErroredOrDownLinks) {
  Renderer renderer(Lean());
  Snapshot snapshot = QuietSnapshot();
  std::string body = *renderer.Render(snapshot).text;
  EXPECT_FALSE(Has(body, "gpuscope_nvlink_link_errors_total{"));
  EXPECT_FALSE(Has(body, "gpuscope_nvlink_link_active{"));
  snapshot.samples[0].nvlink[3].crc_flit = 5;
  snapshot.samples[0].nvlink[7].active = false;
  body = *renderer.Render(snapshot).text;
  EXPECT_EQ(Count(body, "gpuscope_nvlink_link_active{"), 2u);
  EXPECT_EQ(Count(body, "gpuscope_nvlink_link_errors_total{"), 2u * 4);
  EXPECT_TRUE(Has(body, "link=\"3\",type=\"crc_flit\"} 5\n"));
  snapshot.samples[0].nvlink[7].active = true;  // back up: its series stay
  EXPECT_EQ(Count(*renderer.Render(snapshot).text, "gpuscope_nvlink_link_active{"), 2u);

  RenderOptions every = Lean();
  every.nvlink_per_link = true;
  body = *Renderer(every).Render(QuietSnapshot()).text;
  EXPECT_EQ(Count(body, "gpuscope_nvlink_link_active{"), 18u);
  EXPECT_EQ(Count(body, "gpuscope_nvlink_link_errors_total{"), 18u * 4);
}

// Counters run since the driver loaded: a board's lifetime history alone must
// not add series (it would break the budget on every real H100), growth must.
TEST(Profile, SparseCountersShowOnceGrownSinceTheAgentStarted) {
  Renderer renderer(Lean());
  Snapshot snapshot = QuietSnapshot();
  snapshot.samples[0].Set(Metric::kEccDbeVolatile, 7);
  for (auto& link : snapshot.samples[0].nvlink) link.crc_flit = 1234;
  std::string body = *renderer.Render(snapshot).text;
  body = *renderer.Render(snapshot).text;
  EXPECT_FALSE(Has(body, "gpuscope_ecc_errors_total{")) << "history alone";
  EXPECT_FALSE(Has(body, "gpuscope_nvlink_link_errors_total{")) << "history alone";
  snapshot.samples[0].Set(Metric::kEccDbeVolatile, 8);
  snapshot.samples[0].nvlink[5].crc_flit = 1235;
  body = *renderer.Render(snapshot).text;
  EXPECT_EQ(Count(body, "gpuscope_ecc_errors_total{"), 1u);
  EXPECT_TRUE(Has(body, "} 8\n"));
  EXPECT_EQ(Count(body, "gpuscope_nvlink_link_errors_total{"), 4u) << "link 5 only";
  EXPECT_TRUE(Has(body, "link=\"5\",type=\"crc_flit\"} 1235\n"));
}

TEST(Profile, SparseFamilyShowsSamplesOnceNonZero) {
  Family health{"gpuscope_gpu_health",
                "Verdict.",
                FamilyType::kGauge,
                LabelBase::kNative,
                {{0, {{"check", "memory"}}, 0}, {0, {{"check", "thermal"}}, 0}}};
  health.detail = Detail::kSparse;
  Renderer renderer(Lean());
  Snapshot snapshot = QuietSnapshot();
  EXPECT_FALSE(Has(*renderer.Render(snapshot, {&health, 1}, Format::kText), "gpuscope_gpu_health"));
  health.samples[1].value = 1;
  std::string body = *renderer.Render(snapshot, {&health, 1}, Format::kText);
  EXPECT_EQ(Count(body, "gpuscope_gpu_health{"), 1u);
  EXPECT_TRUE(Has(body, "check=\"thermal\"} 1\n"));
  health.samples[1].value = 0;
  body = *renderer.Render(snapshot, {&health, 1}, Format::kText);
  EXPECT_TRUE(Has(body, "check=\"thermal\"} 0\n"));
  EXPECT_FALSE(Has(body, "check=\"memory\""));

  RenderOptions full = Lean();
  full.profile = Profile::kFull;
  body = *Renderer(full).Render(snapshot, {&health, 1}, Format::kText);
  EXPECT_EQ(Count(body, "gpuscope_gpu_health{"), 2u);
}

}  // namespace
}  // namespace gpuscope::prom
