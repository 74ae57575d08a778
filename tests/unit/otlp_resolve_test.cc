// Attribution of application points to GPUs (resolve.h) and the KPI conventions and mapping
// file (kpi.h).
#include <gtest/gtest.h>

#include "gpuscope/attribution.h"
#include "otlp/kpi.h"
#include "otlp/resolve.h"

namespace gpuscope::otlp {
namespace {

// Four GPUs: 0 and 1 run pod trainer-7d9f8c6b4-x2kq9 (workload trainer), pid 4242 on GPU 1;
// 2 runs pid 77 "vllm"; 3 is idle.
Snapshot Node() {
  Snapshot s;
  s.system.hostname = "node-a";
  for (unsigned i = 0; i < 4; ++i) {
    GpuInfo g;
    g.index = i;
    g.uuid = "GPU-" + std::to_string(i);
    s.gpus.push_back(g);
    s.samples.emplace_back();
  }
  s.samples[1].processes.push_back({4242, "python", {}, {}, {}});
  s.samples[2].processes.push_back({77, "vllm", {}, {}, {}});
  auto a = std::make_shared<Attribution>();
  Holder trainer{"ml", "trainer-7d9f8c6b4-x2kq9", "main", "", "trainer"};
  a->holders["GPU-0"] = {trainer};
  a->holders["GPU-1"] = {trainer};
  s.attribution = a;
  return s;
}

std::vector<std::string> Gpus(const std::vector<Target>& targets) {
  std::vector<std::string> out;
  for (const Target& t : targets) out.push_back(t.gpu);
  return out;
}

TEST(ResolveTest, ProcessIdFindsTheGpusItRunsOn) {
  Resolver r(Node());
  Origin o;
  o.pid = "4242";
  std::vector<Target> t = r.Resolve(o);
  EXPECT_EQ(Gpus(t), std::vector<std::string>{"1"});
  EXPECT_EQ(t[0].uuid, "GPU-1");
  EXPECT_EQ(t[0].workload, "trainer");  // the GPU's holder
  EXPECT_EQ(t[0].pod, "trainer-7d9f8c6b4-x2kq9");
}

TEST(ResolveTest, APodOrServiceOnSeveralGpusMapsToAllOfThem) {
  Resolver r(Node());
  Origin pod;
  pod.pod = "trainer-7d9f8c6b4-x2kq9";
  pod.namespace_name = "ml";
  EXPECT_EQ(Gpus(r.Resolve(pod)), (std::vector<std::string>{"0", "1"}));
  pod.namespace_name = "other";  // same pod name, another namespace: not ours
  EXPECT_TRUE(r.Resolve(pod).empty());
  Origin service;
  service.service = "trainer";
  EXPECT_EQ(Gpus(r.Resolve(service)), (std::vector<std::string>{"0", "1"}));
  service.service = "vllm";  // a process name
  std::vector<Target> t = r.Resolve(service);
  EXPECT_EQ(Gpus(t), std::vector<std::string>{"2"});
  EXPECT_EQ(t[0].workload, "vllm");
}

TEST(ResolveTest, HostNameIsAPodNameOrThisNodeAndUnknownsStayUnattributed) {
  Resolver r(Node());
  Origin container;
  container.host = "trainer-7d9f8c6b4-x2kq9";
  EXPECT_EQ(Gpus(r.Resolve(container)), (std::vector<std::string>{"0", "1"}));
  Origin node;
  node.host = "node-a";
  EXPECT_EQ(Gpus(r.Resolve(node)), (std::vector<std::string>{"0", "1", "2"}));  // GPUs at work
  Origin stranger;
  stranger.host = "node-b";
  stranger.pid = "1";
  stranger.service = "nobody";
  EXPECT_TRUE(r.Resolve(stranger).empty());
  // The pid wins over a service name that would match more GPUs.
  Origin both;
  both.pid = "4242";
  both.service = "trainer";
  EXPECT_EQ(Gpus(r.Resolve(both)), std::vector<std::string>{"1"});
}

TEST(KpiTest, SemanticConventionNamesAreRecognisedAsTheyAre) {
  Conventions c;
  auto n = c.Name("gen_ai.server.request.duration", "s", Kind::kHistogram);
  ASSERT_TRUE(n);
  EXPECT_EQ(n->family, "gpuscope_app_request_duration_seconds");
  EXPECT_EQ(n->kpi, Kpi::kRequestDuration);
  n = c.Name("http.server.request.duration", "ms", Kind::kHistogram);
  EXPECT_EQ(n->kpi, Kpi::kRequestDuration);
  EXPECT_DOUBLE_EQ(n->scale, 1e-3);
  EXPECT_EQ(c.Name("gen_ai.server.time_to_first_token", "s", Kind::kHistogram)->kpi,
            Kpi::kTimeToFirstToken);
  EXPECT_EQ(c.Name("training.samples", "", Kind::kCounter)->family, "gpuscope_app_samples_total");
  // The wrong kind or unit: kept under a generic name, not as the KPI.
  n = c.Name("training.step.duration", "By", Kind::kHistogram);
  EXPECT_EQ(n->kpi, Kpi::kNone);
  EXPECT_EQ(n->family, "gpuscope_app_training_step_duration_bytes");
  EXPECT_EQ(c.Name("requests", "", Kind::kCounter)->family, "gpuscope_app_requests_total");
  EXPECT_FALSE(c.Name("...", "", Kind::kGauge));
}

TEST(KpiTest, TheMappingFileRenamesAndFailsWithFileAndLine) {
  auto c = Conventions::Parse(
      "rename:\n"
      "  train_step_seconds: training.step.duration\n"
      "  latency_ms: {to: gen_ai.server.request.duration, unit: ms}\n",
      "kpis.yml");
  ASSERT_TRUE(c.ok()) << c.status().message();
  EXPECT_EQ(c->Name("train_step_seconds", "", Kind::kHistogram)->kpi, Kpi::kStepDuration);
  auto n = c->Name("latency_ms", "", Kind::kHistogram);
  EXPECT_EQ(n->kpi, Kpi::kRequestDuration);
  EXPECT_DOUBLE_EQ(n->scale, 1e-3);
  auto bad_unit = Conventions::Parse("rename:\n  a: b\n  c: {to: d, unit: parsec}\n", "k.yml");
  EXPECT_EQ(bad_unit.status().message(), "k.yml:3: unit 'parsec' is not one of s, ms, us, ns");
  auto bad_key = Conventions::Parse("renames:\n  a: b\n", "k.yml");
  EXPECT_EQ(bad_key.status().message(), "k.yml:1: unknown key 'renames'");
  auto twice = Conventions::Parse("rename:\n  a: b\n  a: c\n", "k.yml");
  EXPECT_FALSE(twice.ok());
  auto syntax = Conventions::Parse("rename: [\n", "k.yml");
  EXPECT_NE(syntax.status().message().find("k.yml:"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::otlp
