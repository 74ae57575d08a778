// The list of attribution sources (source.h): which sources the options
// register and in what order, how the facts of several sources merge (the
// earlier registered wins where two name the same thing), and that a source
// that fails, or throws, costs its own facts only.
#include <functional>
#include <stdexcept>

#include "attribution/service.h"
#include "attribution/source.h"
#include "attribution_test_util.h"

namespace gpuscope::attribution {
namespace {

class FakeSource final : public Source {
 public:
  FakeSource(std::string name, std::function<Result<Evidence>()> read, bool reports_up = true)
      : name_(std::move(name)), read_(std::move(read)), reports_up_(reports_up) {}
  std::string_view name() const override { return name_; }
  bool reports_up() const override { return reports_up_; }
  Result<Evidence> Read(const Inputs&) const override { return read_(); }

 private:
  std::string name_;
  std::function<Result<Evidence>()> read_;
  bool reports_up_;
};

std::unique_ptr<Source> Answers(std::string name, Evidence evidence) {
  return std::make_unique<FakeSource>(std::move(name), [evidence] { return evidence; });
}
std::unique_ptr<Source> Fails(std::string name, bool reports_up = true) {
  return std::make_unique<FakeSource>(
      name, [name]() -> Result<Evidence> { return Status::Unavailable(name + " is gone"); },
      reports_up);
}
std::unique_ptr<Source> Throws(std::string name) {
  return std::make_unique<FakeSource>(
      std::move(name), []() -> Result<Evidence> { throw std::runtime_error("boom"); });
}

Evidence Jobs(const std::string& device_key, std::vector<std::string> ids) {
  Evidence e;
  e.jobs[device_key] = std::move(ids);
  return e;
}
Evidence Pods(const std::string& device_key, std::vector<PodRef> pods) {
  Evidence e;
  e.pods[device_key] = std::move(pods);
  return e;
}
Evidence Owner(unsigned pid, CgroupOwner owner) {
  Evidence e;
  e.owners[pid] = std::move(owner);
  return e;
}
Evidence Containers(std::map<std::string, CriContainer> containers) {
  Evidence e;
  e.containers = std::move(containers);
  return e;
}

std::vector<std::string> Names(const Sources& sources) {
  std::vector<std::string> out;
  for (const auto& s : sources) out.emplace_back(s->name());
  return out;
}

class SourcesTest : public ::testing::Test {
 protected:
  Attribution Run(const Sources& sources) { return Collect(sources, Inputs{devices_, processes_}); }

  const std::vector<GpuInfo> devices_ = {Gpu(0), Gpu(1)};
  DeviceProcesses processes_ = {{"GPU-0", {{7, "python3"}}}};
};

TEST_F(SourcesTest, OptionsRegisterTheSourcesInOrder) {
  ServiceOptions options;
  options.proc_root = "/nonexistent";
  EXPECT_EQ(Names(BuildSources(options)), (std::vector<std::string>{"cgroup"}));
  options.kubernetes = true;
  options.kubelet.socket = "/nonexistent/kubelet.sock";
  options.cri.socket = "/nonexistent/cri.sock";
  options.hpc_job_dir = "/nonexistent/jobs";
  options.process_names = true;
  EXPECT_EQ(Names(BuildSources(options)),
            (std::vector<std::string>{"kubelet", "cri", "hpc", "cgroup", "process-names"}));
}

TEST_F(SourcesTest, BeforeTheFirstRefreshEveryReportingSourceIsDown) {
  ServiceOptions options;
  options.kubernetes = true;
  options.kubelet.socket = "/nonexistent/kubelet.sock";
  options.cri.socket = "/nonexistent/cri.sock";
  options.hpc_job_dir = "/nonexistent/jobs";
  options.process_names = true;
  Service service(options);
  const auto& sources = service.Latest()->sources;
  ASSERT_EQ(sources.size(), 3u);  // the cgroups and the names have no `up`
  EXPECT_EQ(sources[0].name, "kubelet");
  EXPECT_EQ(sources[1].name, "cri");
  EXPECT_EQ(sources[2].name, "hpc");
  for (const auto& s : sources) EXPECT_FALSE(s.up) << s.name;
  EXPECT_EQ(sources[0].error, "not asked yet");
  EXPECT_EQ(sources[2].error, "not read yet");
}

TEST_F(SourcesTest, UpStatesFollowRegistrationOrder) {
  Sources sources;
  sources.push_back(Answers("zeta", {}));
  sources.push_back(Fails("alpha"));
  sources.push_back(Answers("mid", {}));
  const Attribution a = Run(sources);
  ASSERT_EQ(a.sources.size(), 3u);
  EXPECT_EQ(a.sources[0].name, "zeta");
  EXPECT_TRUE(a.sources[0].up);
  EXPECT_EQ(a.sources[1].name, "alpha");
  EXPECT_FALSE(a.sources[1].up);
  EXPECT_EQ(a.sources[1].error, "alpha is gone");
  EXPECT_EQ(a.sources[2].name, "mid");
  EXPECT_TRUE(a.sources[2].up);
}

// Wherever the failing source stands in the list, the others' facts all stay.
TEST_F(SourcesTest, AFailingOrThrowingSourceCostsOnlyItsOwnFacts) {
  for (size_t at = 0; at <= 2; ++at) {
    Sources sources;
    sources.push_back(Answers("jobs", Jobs("GPU-0", {"42"})));
    sources.push_back(Answers("pods", Pods("GPU-1", {{"ml", "trainer-q7x4z", "main"}})));
    sources.insert(sources.begin() + at, Fails("down"));
    sources.push_back(Throws("thrower"));
    sources.push_back(Fails("quiet", /*reports_up=*/false));
    const Attribution a = Run(sources);
    EXPECT_EQ(a.Of(devices_[0]), (std::vector<Holder>{{"", "", "", "42", "42"}})) << at;
    EXPECT_EQ(a.Of(devices_[1]),
              (std::vector<Holder>{{"ml", "trainer-q7x4z", "main", "", "trainer"}}))
        << at;
    ASSERT_EQ(a.sources.size(), 4u) << at;  // "quiet" reports no `up`
    EXPECT_EQ(a.sources[at].name, "down");
    EXPECT_FALSE(a.sources[at].up);
    EXPECT_EQ(a.sources[3].name, "thrower");
    EXPECT_FALSE(a.sources[3].up);
    EXPECT_EQ(a.sources[3].error, "thrower source failed: boom");
  }
}

TEST_F(SourcesTest, TheEarlierSourceWinsWhereTwoNameTheSameProcess) {
  const auto run = [&](const std::string& first, const std::string& second) {
    Sources sources;
    sources.push_back(Answers("a", Owner(7, {.slurm_job = first})));
    sources.push_back(Answers("b", Owner(7, {.slurm_job = second})));
    return Run(sources);
  };
  ASSERT_NE(run("1", "2").OfProcess(7), nullptr);
  EXPECT_EQ(run("1", "2").OfProcess(7)->hpc_job, "1");
  EXPECT_EQ(run("2", "1").OfProcess(7)->hpc_job, "2");
}

TEST_F(SourcesTest, TheEarlierSourceWinsWhereTwoNameTheSameContainer) {
  const std::string id(64, 'a');
  const auto run = [&](const std::string& first, const std::string& second) {
    Sources sources;
    sources.push_back(Answers("owner", Owner(7, {.container_id = id, .pod_uid = "u"})));
    sources.push_back(Answers("a", Containers({{id, {"ns", first, "", "c"}}})));
    sources.push_back(Answers("b", Containers({{id, {"ns", second, "", "c"}}})));
    return Run(sources);
  };
  EXPECT_EQ(run("web-0", "db-0").Of(devices_[0]).at(0).pod, "web-0");
  EXPECT_EQ(run("db-0", "web-0").Of(devices_[0]).at(0).pod, "db-0");
}

TEST_F(SourcesTest, JobsAndPodsOfSeveralSourcesJoin) {
  Sources sources;
  sources.push_back(Answers("dir", Jobs("GPU-0", {"1"})));
  sources.push_back(Answers("cgroups", Jobs("GPU-0", {"2", "1"})));
  sources.push_back(Answers("k1", Pods("GPU-1", {{"ml", "a-0", "c"}})));
  sources.push_back(Answers("k2", Pods("GPU-1", {{"ml", "b-0", "c"}, {"ml", "a-0", "c"}})));
  const Attribution a = Run(sources);
  EXPECT_EQ(a.Of(devices_[0]),
            (std::vector<Holder>{{"", "", "", "1", "1"}, {"", "", "", "2", "2"}}));
  EXPECT_EQ(a.Of(devices_[1]),
            (std::vector<Holder>{{"ml", "a-0", "c", "", "a"}, {"ml", "b-0", "c", "", "b"}}));
}

// resolve.h: the runtime's answer outranks the exclusive grant, and a
// container it does not list names no pod, whichever source is listed first.
TEST_F(SourcesTest, TheRuntimeOutranksTheGrantInEitherOrder) {
  const std::string id(64, 'a');
  const auto run = [&](bool runtime_first, std::optional<std::string> runtime_pod) {
    Sources sources;
    sources.push_back(Answers("grant", Pods("GPU-0", {{"ml", "trainer-q7x4z", "main"}})));
    sources.push_back(Answers("owner", Owner(7, {.container_id = id, .pod_uid = "u"})));
    if (runtime_pod) {
      auto runtime = Answers(
          "cri",
          Containers({{runtime_pod->empty() ? "other" : id, {"inf", *runtime_pod, "", "srv"}}}));
      sources.insert(runtime_first ? sources.begin() : sources.end(), std::move(runtime));
    }
    const auto attribution = Run(sources);
    const Holder* h = attribution.OfProcess(7);
    return h ? h->pod : std::string("(none)");
  };
  EXPECT_EQ(run(true, std::nullopt), "trainer-q7x4z");  // no runtime: the grant names it
  EXPECT_EQ(run(true, "api-b2c4d"), "api-b2c4d");
  EXPECT_EQ(run(false, "api-b2c4d"), "api-b2c4d");
  EXPECT_EQ(run(false, ""), "(none)");  // the runtime does not list it
}

}  // namespace
}  // namespace gpuscope::attribution
