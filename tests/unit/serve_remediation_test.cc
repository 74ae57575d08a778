// The remediation counters on /metrics: rendered last, only when the agent
// runs a Remediator (the exporter's family source), and they follow the
// remediation thread's counts from the next cycle on.
#include <gtest/gtest.h>

#include <memory>

#include "cli_test_snapshot.h"
#include "remediate/remediator.h"
#include "serve/exporter.h"

namespace gpuscope::serve {
namespace {

class RefusingActuator : public remediate::Actuator {
 public:
  std::string_view Name() const override { return "test"; }
  const std::string& Node() const override { return node_; }
  remediate::NodeView Read() override {
    remediate::NodeView v;
    v.found = true;
    v.nodes = 10;
    v.drained_by_us = 1;  // the breaker's one slot is taken
    return v;
  }
  Result<remediate::DrainResult> Drain(const remediate::Decision&) override {
    return Status::Internal("never called");
  }
  Status Resume() override { return Status::Internal("never called"); }

 private:
  std::string node_ = "n1";
};

struct Fixture {
  double now = 1714566896.789;
  Window window{Window::Options{}};
  Exporter exporter{ExporterOptions{}, [this] { return now; }};
  void Publish() {
    Snapshot snapshot = cli::testing::TwoGpuSnapshot();
    exporter.Decorate(snapshot);
    exporter.OnSnapshot(std::make_shared<const Snapshot>(std::move(snapshot)), window);
  }
  std::string Text() const { return *exporter.Current()->Body(prom::Format::kText); }
};

TEST(ServeRemediation, NoFamilyWithoutRemediation) {
  Fixture f;
  f.Publish();
  EXPECT_EQ(f.Text().find("gpuscope_remediation_actions_total"), std::string::npos);
}

TEST(ServeRemediation, CountersRenderedLastAndFollowTheThread) {
  Fixture f;
  remediate::Remediator r({}, std::make_unique<RefusingActuator>(), [&f] { return f.now; });
  f.exporter.SetFamilySource([&r] { return r.Families(); });
  f.Publish();
  std::string text = f.Text();
  const std::size_t at = text.find("# TYPE gpuscope_remediation_actions_total counter\n");
  ASSERT_NE(at, std::string::npos);
  EXPECT_EQ(text.find("# TYPE", at + 1), std::string::npos) << "not the last family";
  EXPECT_NE(text.find("gpuscope_remediation_actions_total{action=\"drain\",result=\"breaker_open\"}"
                      " 0\n"),
            std::string::npos);

  // A cycle with XID 79 on GPU 1, as the agent hands it to the thread.
  auto report = std::make_shared<health::HealthReport>();
  report->gpus.resize(2);
  report->gpus[1].gpu = report->gpus[1].slot = 1;
  report->gpus[1].uuid = "GPU-1";
  report->gpus[1].xid_window[79] = 1;
  r.RunOnce({report, f.exporter.Current()->snapshot});
  f.Publish();
  text = f.Text();
  EXPECT_NE(text.find("gpuscope_remediation_actions_total{action=\"drain\",result=\"breaker_open\"}"
                      " 1\n"),
            std::string::npos)
      << text.substr(text.find("gpuscope_remediation"));
}

}  // namespace
}  // namespace gpuscope::serve
