// The KPI join off the sampling cycle (issue 31, finding 1): the publish hook
// renders the last joined result and never joins, however many series the
// store holds; a join is bounded (cut at series boundaries, counted) and
// matches readings to findings through an index.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "cli_test_snapshot.h"
#include "otlp/kpi.h"
#include "serve/exporter.h"
#include "serve/kpi_join.h"

namespace gpuscope::serve {
namespace {

constexpr int kGpus = 10;

// Ten GPUs, one process (pid 4242) on every one: a sender with that pid is on all ten.
Snapshot TenGpus() {
  Snapshot two = cli::testing::TwoGpuSnapshot();
  Snapshot snap = two;
  snap.gpus.clear();
  snap.samples.clear();
  for (int i = 0; i < kGpus; ++i) {
    GpuInfo gpu = two.gpus[0];
    gpu.index = static_cast<unsigned>(i);
    gpu.uuid = "GPU-" + std::to_string(100 + i) + "-1111-2222-3333-444444444444";
    snap.gpus.push_back(gpu);
    snap.samples.push_back(two.samples[0]);  // pid 4242
  }
  return snap;
}

// `services` senders (one workload each) on pid 4242, each `ranks` step-duration
// histograms (label rank).
void Load(otlp::Store& store, int services, double now, int ranks = 1,
          const std::string& service_prefix = "svc-") {
  otlp::Batch batch;
  const std::optional<otlp::Naming> naming =
      otlp::Conventions().Name("training.step.duration", "s", otlp::Kind::kHistogram);
  for (int i = 0; i < services * ranks; ++i) {
    if (i % ranks == 0) {
      otlp::Origin origin;
      origin.pid = "4242";
      origin.service = service_prefix + std::to_string(i / ranks);
      batch.origins.push_back(origin);
    }
    otlp::Point p;
    p.origin = static_cast<uint32_t>(i / ranks);
    if (ranks > 1) p.labels = {{"rank", std::to_string(i % ranks)}};
    p.naming = *naming;
    p.kind = otlp::Kind::kHistogram;
    p.histogram.bounds = {0.1, 0.2, 0.5, 1, 2, 5};
    p.histogram.counts = {1, 2, 3, 4, 5, 6, 7};
    p.histogram.count = 28;
    p.histogram.sum = 40;
    batch.points.push_back(std::move(p));
  }
  ASSERT_EQ(store.Ingest(batch, now).accepted, static_cast<uint64_t>(services * ranks));
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

struct Fixture {
  double now = 1714566896.789;
  Window window{Window::Options{}};
  otlp::Store store;
  Exporter exporter{ExporterOptions{}, [this] { return now; }};
  std::unique_ptr<KpiJoin> join;

  explicit Fixture(std::size_t max_bytes) {
    KpiJoinOptions options;
    options.max_metrics_bytes = max_bytes;
    join = std::make_unique<KpiJoin>(
        options, store,
        [this] {
          CyclePtr cycle = exporter.Current();
          return cycle ? KpiJoin::Inputs{cycle->snapshot, cycle->diagnoses} : KpiJoin::Inputs{};
        },
        [this] { return now; });
    exporter.SetKpiSource([j = join.get()] { return j->Latest(); });  // as serve's agent
  }
  // One sampling cycle's publish hook, as the agent wires it.
  std::string Cycle() {
    now += 1;
    Snapshot snap = TenGpus();
    snap.timestamp = now;
    exporter.OnSnapshot(std::make_shared<const Snapshot>(std::move(snap)), window);
    join->Wake();
    return *exporter.Current()->Body(prom::Format::kText);
  }
};

// 3,000 senders on 10 GPUs: 30,000 attributed series. The hook renders what
// the join last built and never joins: the store is untouched on the sampler's
// thread (its readings stay empty until a join), and the body stays bounded.
TEST(ServeKpiJoin, ThePublishHookNeverJoinsHoweverLargeTheStore) {
  Fixture f(256 << 10);
  Load(f.store, 3000, f.now);
  const std::string before = f.Cycle();
  for (int i = 0; i < 3; ++i) f.Cycle();
  EXPECT_EQ(f.join->joins(), 0u);
  EXPECT_TRUE(f.store.Readings().empty());  // Store::Families never ran
  EXPECT_FALSE(Contains(before, "gpuscope_app_step_duration_seconds"));

  f.join->RunOnce();  // the join thread's work
  EXPECT_EQ(f.join->joins(), 1u);
  // Readings only of the lines built: the store stops near the cap.
  const std::size_t kept = f.store.Readings().size();
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 3000u * kGpus);
  const std::string after = f.Cycle();
  EXPECT_TRUE(Contains(after, "gpuscope_app_step_duration_seconds_bucket{gpu=\"0\""));
  EXPECT_TRUE(Contains(after, "gpuscope_otlp_series_omitted_active{limit=\"metrics_bytes\"} "));
  EXPECT_FALSE(Contains(after, "gpuscope_otlp_series_omitted_active{limit=\"metrics_bytes\"} 0\n"));
  // One kpi_regression key per reading: 1,024 followed, the rest counted.
  const std::size_t untracked = kept > 1024 ? kept - 1024 : 0;
  EXPECT_TRUE(Contains(after, "gpuscope_otlp_series_omitted_active{limit=\"regression_keys\"} " +
                                  std::to_string(untracked) + "\n"));
  EXPECT_TRUE(Contains(after, "gpuscope_otlp_series_active 3000\n"));
  // The application share: under the cap plus the few self-metric lines.
  EXPECT_LE(after.size(), before.size() + (256 << 10) + 4096);
  // A cut never splits a histogram: the last application line is a _count.
  const std::size_t last = after.rfind("gpuscope_app_step_duration_seconds_");
  ASSERT_NE(last, std::string::npos);
  EXPECT_EQ(after.compare(last, 41, "gpuscope_app_step_duration_seconds_count{"), 0)
      << after.substr(last, 80);
}

TEST(ServeKpiJoin, TheJoinThreadFollowsWakes) {
  Fixture f(4 << 20);
  Load(f.store, 2, f.now);
  f.join->Start();
  f.Cycle();
  for (int i = 0; i < 500 && f.join->joins() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  f.join->Stop();
  ASSERT_GE(f.join->joins(), 1u);
  EXPECT_EQ(f.join->Latest()->kpis.size(), 2u * kGpus);
  EXPECT_TRUE(Contains(f.Cycle(), "gpuscope_app_step_duration_seconds_count{gpu=\"9\""));
}

prom::Family Histogram(int series) {
  prom::Family f;
  f.name = "h";
  f.type = prom::FamilyType::kHistogram;
  std::string lines;
  for (int i = 0; i < series; ++i) {
    const std::string l = "{s=\"" + std::to_string(i) + "\"";
    lines += "h_bucket" + l + ",le=\"+Inf\"} 1\nh_sum" + l + "} 1\nh_count" + l + "} 1\n";
  }
  f.lines = std::make_shared<const std::string>(lines);
  return f;
}

TEST(ServeKpiJoin, CapFamiliesCutsWholeSeriesAndCountsTheRest) {
  const std::size_t one = Histogram(1).lines->size();
  uint64_t omitted = 0;
  std::vector<prom::Family> out;
  out.push_back(Histogram(3));
  out.push_back(Histogram(2));
  prom::Family self;  // no lines: kept whole
  self.name = "gpuscope_otlp_series_active";
  self.samples.push_back({-1, {}, 5});
  out.push_back(self);
  // Room for the header and one and a half series.
  out = CapFamilies(std::move(out), 32 + 2 + one * 3 / 2, &omitted);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(*out[0].lines, *Histogram(1).lines);
  EXPECT_EQ(out[1].name, "gpuscope_otlp_series_active");
  EXPECT_EQ(omitted, 2u + 2u);
  omitted = 0;
  EXPECT_EQ(CapFamilies({Histogram(3)}, 1 << 20, &omitted)[0].lines->size(), 3 * one);
  EXPECT_EQ(omitted, 0u);
}

// The store builds no more lines (and readings) than about the cap: a series
// is written once per GPU, so 3,000 senders on ten GPUs would otherwise build
// 30,000 histograms before the cut (and on 64 GPUs, 192,000).
TEST(ServeKpiJoin, TheStoreStopsBuildingLinesNearTheCap) {
  const double now = 1714566896.789;
  otlp::Store store;
  Load(store, 3000, now);
  uint64_t omitted = 0;
  std::size_t lines = 0;
  for (const prom::Family& f : store.Families(TenGpus(), now, 256 << 10, &omitted)) {
    if (f.lines) lines += f.lines->size();
  }
  EXPECT_GT(lines, 128u << 10);
  EXPECT_LE(lines, 256u << 10);
  const std::size_t kept = store.Readings().size();
  EXPECT_GT(kept, 0u);
  EXPECT_LT(kept, 3000u * kGpus / 10);
  EXPECT_EQ(omitted + kept, 3000u * kGpus);
}

// One sender's flood takes at most its share of the lines: a small sender
// beside it keeps every series (issue 31, finding 5 on /metrics).
TEST(ServeKpiJoin, AFloodingSenderLeavesTheOthersTheirLines) {
  const double now = 1714566896.789;
  otlp::Store store({.sender_share = 0.5});  // the store keeps all 3,000 of the flood
  Load(store, 1, now, 3000, "a-flood-");     // sorts first
  Load(store, 1, now, 4, "train-");
  uint64_t omitted = 0;
  store.Families(TenGpus(), now, 256 << 10, &omitted);
  std::size_t train = 0;
  for (const otlp::KpiReading& r : store.Readings()) train += r.workload == "train-0";
  EXPECT_EQ(train, 4u * kGpus);
  EXPECT_GT(omitted, 0u);
}

TEST(ServeKpiJoin, KpisOfMatchesEachReadingToItsFinding) {
  std::vector<otlp::KpiReading> readings;
  std::vector<otlp::KpiFinding> findings;
  for (int rank = 0; rank < 4; ++rank) {
    readings.push_back({otlp::Kpi::kStepDuration, "fam", rank, "w" + std::to_string(rank), 10, 2});
    otlp::KpiFinding finding;
    finding.rank = 3 - rank;
    finding.family = "fam";
    finding.workload = "w" + std::to_string(3 - rank);
    finding.verdict = "v" + std::to_string(3 - rank);
    findings.push_back(finding);
  }
  readings.push_back({otlp::Kpi::kStepDuration, "fam", -1, "w", 1, 1});  // unattributed
  std::vector<web::KpiReading> kpis = KpisOf(readings, findings, 100);
  ASSERT_EQ(kpis.size(), 4u);
  for (std::size_t i = 0; i < kpis.size(); ++i) {
    EXPECT_EQ(kpis[i].slot, i);
    EXPECT_EQ(kpis[i].summary.verdict, "v" + std::to_string(i));
  }
  EXPECT_EQ(KpisOf(readings, findings, 2).size(), 2u);
}

}  // namespace
}  // namespace gpuscope::serve
