// Exporter: one render per cycle, self-metrics, /health verdicts, counters
// reload, and the endpoints' format negotiation.
#include <gtest/gtest.h>

#include <memory>

#include "cli_test_snapshot.h"
#include "export/counters.h"
#include "serve/endpoints.h"
#include "serve/exporter.h"

namespace gpuscope::serve {
namespace {

struct Fixture {
  double now = 1714566896.789;
  Window window{Window::Options{}};
  std::unique_ptr<Exporter> exporter;

  explicit Fixture(ExporterOptions options = {}) {
    exporter = std::make_unique<Exporter>(std::move(options), [this] { return now; });
  }
  // As serve's sampler: decorated, then published.
  void Publish(Snapshot snapshot) {
    exporter->Decorate(snapshot);
    exporter->OnSnapshot(std::make_shared<const Snapshot>(std::move(snapshot)), window);
  }
  std::string Body(prom::Format format) const { return *exporter->Current()->Body(format); }
  std::string Text() const { return Body(prom::Format::kText); }
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(ServeExporter, NoBodyBeforeTheFirstCycle) {
  Fixture f;
  EXPECT_EQ(f.exporter->Current(), nullptr);
  HealthVerdict health = f.exporter->Health();
  EXPECT_FALSE(health.ok);
  EXPECT_NE(health.reason.find("no sampling cycle"), std::string::npos);
}

TEST(ServeExporter, RendersDcgmNativeAndSelfFamilies) {
  ExporterOptions options;
  options.hostname = "override-host";
  Fixture f(options);
  f.Publish(cli::testing::TwoGpuSnapshot());
  const std::string text = f.Text();
  EXPECT_TRUE(Contains(text, "DCGM_FI_DEV_GPU_UTIL{gpu=\"0\",UUID=\"GPU-00000000-"));
  EXPECT_TRUE(Contains(text, "Hostname=\"override-host\""));
  EXPECT_FALSE(Contains(text, "node-a"));
  EXPECT_TRUE(Contains(text, "# TYPE gpuscope_build_info gauge\ngpuscope_build_info{version=\""));
  EXPECT_TRUE(Contains(text, "gpuscope_nvml_up 1\n"));
  EXPECT_TRUE(Contains(text, "gpuscope_collector_up{gpu=\"0\"} 1\n"));
  EXPECT_TRUE(Contains(text, "gpuscope_collector_up{gpu=\"1\"} 1\n"));
  EXPECT_TRUE(Contains(text, "gpuscope_last_collect_timestamp_seconds 1714566896.789\n"));
  EXPECT_TRUE(Contains(text, "# TYPE gpuscope_scrapes_total counter\ngpuscope_scrapes_total 0\n"));
  // Lean by default: healthy checks and kinds never found have no series.
  EXPECT_FALSE(Contains(text, "gpuscope_gpu_health{"));
  EXPECT_FALSE(Contains(text, "gpuscope_bottleneck{"));
  const std::string om = f.Body(prom::Format::kOpenMetrics);
  EXPECT_TRUE(om.ends_with("# EOF\n"));
  EXPECT_TRUE(Contains(om, "# TYPE gpuscope_scrapes counter\n"));
  options.render.profile = prom::Profile::kFull;
  Fixture full(options);
  full.Publish(cli::testing::TwoGpuSnapshot());
  EXPECT_TRUE(Contains(full.Text(), "gpuscope_gpu_health{"));
  EXPECT_TRUE(Contains(full.Text(), "gpuscope_bottleneck{"));
}

// gzip once per cycle: the same compressed body for every scrape of a cycle,
// inflating to the plain one; a new cycle compresses anew.
TEST(ServeExporter, GzipsEachCycleOnce) {
  Fixture f;
  f.Publish(cli::testing::TwoGpuSnapshot());
  CyclePtr cycle = f.exporter->Current();
  std::shared_ptr<const std::string> gz = cycle->Gzipped(prom::Format::kText);
  ASSERT_TRUE(gz && gz->size() > 18);
  EXPECT_EQ(cycle->Gzipped(prom::Format::kText), gz);  // the same object: not recompressed
  EXPECT_NE(cycle->Gzipped(prom::Format::kOpenMetrics), gz);
  EXPECT_LT(gz->size() * 3, cycle->Body(prom::Format::kText)->size());
  f.exporter->CountScrape(true);
  f.exporter->CountScrape(false);
  EXPECT_EQ(f.exporter->gzip_scrapes(), 1u);
  f.Publish(cli::testing::TwoGpuSnapshot());
  EXPECT_NE(f.exporter->Current()->Gzipped(prom::Format::kText), gz);
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_scrapes_total 2\n"));
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_scrapes_gzip_total 1\n"));
}

// Partial failure is visible: failed NVML calls by call and code, and the
// event thread's up state and wait errors (only with an event source).
TEST(ServeExporter, RendersCallErrorsAndEventThreadState) {
  Fixture f;
  Snapshot snapshot = cli::testing::TwoGpuSnapshot();
  snapshot.samples[1].call_errors[{"nvmlDeviceGetPowerUsage", "NVML_ERROR_UNKNOWN"}] = 4;
  f.Publish(snapshot);
  std::string text = f.Text();
  EXPECT_TRUE(Contains(text,
                       "# TYPE gpuscope_nvml_call_errors_total counter\n"
                       "gpuscope_nvml_call_errors_total{gpu=\"1\",call=\"nvmlDeviceGetPowerUsage\","
                       "code=\"NVML_ERROR_UNKNOWN\"} 4\n"))
      << text;
  EXPECT_FALSE(Contains(text, "gpuscope_events_up"));  // no event source
  health::EventState events;
  events.running = true;
  f.exporter->SetEventSource([&events] { return events; });
  f.Publish(snapshot);
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_events_up 1\n"));
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_event_wait_errors_total 0\n"));
  events.wait_errors = 2;
  events.last_wait_ok = false;
  f.Publish(snapshot);
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_events_up 0\n"));
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_event_wait_errors_total 2\n"));
}

TEST(ServeExporter, BodiesAreSharedUntilTheNextCycle) {
  Fixture f;
  f.Publish(cli::testing::TwoGpuSnapshot());
  CyclePtr cycle = f.exporter->Current();
  auto first = cycle->Body(prom::Format::kText);
  for (int i = 0; i < 5; ++i) f.exporter->CountScrape();
  // Scrapes only bump a counter: the same body is served until a cycle.
  EXPECT_EQ(f.exporter->Current(), cycle);
  EXPECT_EQ(f.exporter->Current()->Body(prom::Format::kText), first);
  EXPECT_EQ(f.exporter->scrapes(), 5u);
  f.Publish(cli::testing::TwoGpuSnapshot());
  EXPECT_NE(f.exporter->Current()->Body(prom::Format::kText), first);
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_scrapes_total 5\n"));
}

TEST(ServeExporter, NativeOnlyDropsDcgmButKeepsSelfMetrics) {
  ExporterOptions options;
  options.render.metrics = prom::MetricSet::kNative;
  Fixture f(options);
  f.Publish(cli::testing::TwoGpuSnapshot());
  EXPECT_FALSE(Contains(f.Text(), "DCGM_FI_"));
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_nvml_up 1\n"));
}

TEST(ServeExporter, HealthVerdicts) {
  ExporterOptions options;
  options.stale_after_s = 3;
  Fixture f(options);
  Snapshot snap = cli::testing::TwoGpuSnapshot();
  snap.timestamp = f.now;
  for (GpuSample& sample : snap.samples) sample.sampled_at = f.now;
  f.Publish(snap);
  EXPECT_TRUE(f.exporter->Health().ok);
  EXPECT_EQ(f.exporter->Health().reason, "OK");

  f.now += 10;  // no cycle for 10 s
  HealthVerdict old = f.exporter->Health();
  EXPECT_FALSE(old.ok);
  EXPECT_NE(old.reason.find("10.0 s ago"), std::string::npos) << old.reason;

  snap.timestamp = f.now;
  for (GpuSample& sample : snap.samples) sample.state = GpuState::kLost;
  f.Publish(snap);
  EXPECT_EQ(f.exporter->Health().reason, "all 2 GPUs are lost");
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_collector_up{gpu=\"1\"} 0\n"));

  Snapshot down;
  down.timestamp = f.now;
  down.nvml_error = "libnvidia-ml.so.1: cannot open shared object file";
  f.Publish(down);
  HealthVerdict verdict = f.exporter->Health();
  EXPECT_FALSE(verdict.ok);
  EXPECT_EQ(verdict.reason, "NVML is down: libnvidia-ml.so.1: cannot open shared object file");
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_nvml_up 0\n"));
}

// A fresh cycle is not enough: /health wants fresh data for at least one GPU
// (issue: 200 while every GPU had hung for longer than stale-after).
TEST(ServeExporter, HealthNeedsFreshDataForAtLeastOneGpu) {
  ExporterOptions options;
  options.stale_after_s = 3;
  Fixture f(options);
  Snapshot snap = cli::testing::TwoGpuSnapshot();
  snap.timestamp = f.now;  // the sampler keeps cycling...
  for (GpuSample& sample : snap.samples) {
    sample.state = GpuState::kStale;  // ...but every GPU hangs
    sample.sampled_at = f.now - 12;
  }
  f.Publish(snap);
  HealthVerdict verdict = f.exporter->Health();
  EXPECT_FALSE(verdict.ok);
  EXPECT_EQ(verdict.reason,
            "no GPU has fresh data: 2 stale (last read up to 12.0 s ago, limit 3.0 s), 0 lost");

  snap.samples[1].sampled_at = f.now - 2.5;  // one GPU answers again
  f.Publish(snap);
  EXPECT_TRUE(f.exporter->Health().ok);

  snap.samples[1].state = GpuState::kLost;  // the only fresh one is lost: not enough
  f.Publish(snap);
  EXPECT_EQ(f.exporter->Health().reason,
            "no GPU has fresh data: 1 stale (last read up to 12.0 s ago, limit 3.0 s), 1 lost");

  EXPECT_EQ(GpuFreshness(Snapshot{}, f.now, 3).reason, "no GPU is watched");
}

TEST(ServeExporter, FrozenClockRendersZeroDuration) {
  ExporterOptions options;
  options.frozen_clock = true;
  Fixture f(options);
  Snapshot snap = cli::testing::TwoGpuSnapshot();
  snap.collect_seconds = 0.0123;
  f.Publish(snap);
  EXPECT_TRUE(Contains(f.Text(), "gpuscope_collect_duration_seconds 0\n"));
}

TEST(ServeExporter, SetCountersReRendersAtOnce) {
  Fixture f;
  f.Publish(cli::testing::TwoGpuSnapshot());
  ASSERT_TRUE(Contains(f.Text(), "DCGM_FI_DEV_GPU_UTIL{"));
  auto counters = prom::ParseCounters("DCGM_FI_DEV_GPU_TEMP, gauge, temperature\n", "new.csv");
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  f.exporter->SetCounters(*counters);
  EXPECT_FALSE(Contains(f.Text(), "DCGM_FI_DEV_GPU_UTIL{"));
  EXPECT_TRUE(Contains(f.Text(), "# HELP DCGM_FI_DEV_GPU_TEMP temperature\n"));
}

TEST(ServeExporter, XidWindowFamilyOnlyWhenTheCountersListIt) {
  EXPECT_FALSE(XidFamilyOptions(prom::DefaultCounterSet()).xid_count_window);
  auto counters = prom::ParseCounters(
      "DCGM_FI_DEV_GPU_TEMP, gauge, temp\nDCGM_EXP_XID_ERRORS_COUNT, gauge, xids in window\n",
      "file.csv");
  ASSERT_TRUE(counters.ok()) << counters.status().message();
  health::FamilyOptions xid = XidFamilyOptions(*counters);
  EXPECT_TRUE(xid.xid_count_window);
  EXPECT_EQ(xid.xid_count_type, prom::FamilyType::kGauge);
  EXPECT_EQ(xid.xid_count_help, "xids in window");
}

TEST(ServeHttp, ChooseFormat) {
  using prom::Format;
  EXPECT_EQ(ChooseFormat(""), Format::kText);
  EXPECT_EQ(ChooseFormat("text/plain;version=0.0.4"), Format::kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text"), Format::kOpenMetrics);
  // What Prometheus 2.x sends.
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;version=1.0.0,application/"
                         "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,"
                         "*/*;q=0.1"),
            Format::kOpenMetrics);
  EXPECT_EQ(ChooseFormat("text/plain;q=1, application/openmetrics-text;q=0.5"), Format::kText);
  EXPECT_EQ(ChooseFormat("application/openmetrics-text;q=0"), Format::kText);
  EXPECT_EQ(ChooseFormat("Application/OpenMetrics-Text; q=0.9, */*;q=0.8"), Format::kOpenMetrics);
}

}  // namespace
}  // namespace gpuscope::serve
