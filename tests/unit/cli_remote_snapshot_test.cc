// The snapshot an agent serves (/api/v1/snapshot) parses back into a Snapshot
// that every renderer prints byte for byte as the original: the summary, -L,
// query (every field), top (the full frame and the 80x24 screen). And the
// parser refuses what a broken or hostile agent sends, naming what is wrong.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <string>

#include "cli/agent_source.h"
#include "cli/commands.h"
#include "cli/list_command.h"
#include "cli/node.h"
#include "cli/query_fields.h"
#include "cli/query_format.h"
#include "cli/summary.h"
#include "cli/top_frame.h"
#include "gpuscope/attribution.h"
#include "serve/snapshot_json.h"

namespace gpuscope::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// mixed-node at one moment: 8 GPUs of four models, MIG instances, processes.
SnapshotPtr SimulatedSnapshot() {
  setenv("GPUSCOPE_SIM_FROZEN_TIME", "120", 1);
  CommonOptions common;
  common.simulate = "mixed-node";
  Result<std::unique_ptr<Node>> node = Node::Open(common);
  EXPECT_TRUE(node.ok()) << node.status().message();
  Result<SnapshotPtr> snapshot = (*node)->Sample();
  EXPECT_TRUE(snapshot.ok()) << snapshot.status().message();
  unsetenv("GPUSCOPE_SIM_FROZEN_TIME");
  unsetenv("GPUSCOPE_SIM_SCENARIO");
  unsetenv("GPUSCOPE_SIM_START_TIME");
  // Attribution as an agent with --process-names gives it: a holder per device, per process.
  auto copy = std::make_shared<Snapshot>(**snapshot);
  auto attribution = std::make_shared<Attribution>();
  for (const GpuInfo& gpu : copy->gpus) {
    attribution->holders[Attribution::DeviceKey(gpu)] = {{"ml", "train-0", "main", "", "train"}};
  }
  attribution->processes[3100] = {"ml", "train-0", "main", "4242", "train"};
  attribution->sources.push_back({"kubelet", false, "dial /var/lib/kubelet/secret.sock", 2, 1});
  copy->attribution = std::move(attribution);
  return copy;
}

serve::RemoteSnapshot RoundTrip(const Snapshot& snapshot, bool names,
                                const std::vector<std::string>& verdicts = {}) {
  const std::string body = serve::SnapshotJson(
      snapshot, {.simulated = true, .scenario = "mixed-node", .process_names = names}, verdicts);
  Result<serve::RemoteSnapshot> parsed = serve::ParseSnapshotJson(body);
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  return parsed.ok() ? *parsed : serve::RemoteSnapshot{};
}

std::vector<std::size_t> AllSlots(const Snapshot& s) {
  std::vector<std::size_t> slots;
  for (std::size_t i = 0; i < s.gpus.size(); ++i) {
    if (!s.gpus[i].is_mig()) slots.push_back(i);
  }
  return slots;
}

TEST(CliRemoteSnapshot, EveryRendererPrintsTheSameBytes) {
  SnapshotPtr here = SimulatedSnapshot();
  ASSERT_TRUE(here && here->gpus.size() == 11);
  std::vector<std::string> verdicts(here->gpus.size(), "");
  verdicts[6] = "thermal throttling: 93 C";
  serve::RemoteSnapshot there = RoundTrip(*here, /*names=*/true, verdicts);
  ASSERT_TRUE(there.snapshot);
  EXPECT_TRUE(there.agent.simulated);
  EXPECT_EQ(there.agent.scenario, "mixed-node");
  EXPECT_EQ(there.verdicts, verdicts);
  const Snapshot& remote = *there.snapshot;

  SummaryOptions summary{true, "mixed-node"};
  EXPECT_EQ(FormatSummary(remote, summary), FormatSummary(*here, summary));
  EXPECT_THAT(FormatSummary(remote, summary), HasSubstr("tritonserver"));
  EXPECT_EQ(FormatGpuList(remote), FormatGpuList(*here));

  std::vector<const GpuField*> gpu_fields;
  for (const GpuField& f : GpuFields()) {
    if (f.name != "timestamp") gpu_fields.push_back(&f);
  }
  std::vector<const AppField*> app_fields;
  for (const AppField& f : AppFields()) {
    if (f.name != "timestamp") app_fields.push_back(&f);
  }
  for (CsvOptions csv : {CsvOptions{}, CsvOptions{.header = false, .units = false}}) {
    EXPECT_EQ(FormatGpuRows(remote, AllSlots(remote), gpu_fields, csv),
              FormatGpuRows(*here, AllSlots(*here), gpu_fields, csv));
    EXPECT_EQ(FormatAppRows(remote, AllSlots(remote), app_fields, csv),
              FormatAppRows(*here, AllSlots(*here), app_fields, csv));
  }

  FrameOptions full;
  full.color = false;
  full.simulated = true;
  full.scenario = "mixed-node";
  EXPECT_EQ(RenderFrame(remote, full), RenderFrame(*here, full));
  FrameOptions screen = full;
  screen.width = 80;
  screen.height = 24;
  screen.selected = 6;
  screen.color = true;
  screen.verdicts = verdicts;
  EXPECT_EQ(RenderFrame(remote, screen), RenderFrame(*here, screen));
  EXPECT_THAT(RenderFrame(remote, screen), HasSubstr("thermal throttling"));
}

TEST(CliRemoteSnapshot, ProcessNamesAndSourceErrorsStayOnTheHost) {
  SnapshotPtr here = SimulatedSnapshot();
  serve::RemoteSnapshot there = RoundTrip(*here, /*names=*/false);
  ASSERT_TRUE(there.snapshot);
  EXPECT_FALSE(there.agent.process_names);
  std::size_t processes = 0;
  for (const GpuSample& s : there.snapshot->samples) {
    for (const ProcessInfo& p : s.processes) {
      EXPECT_EQ(p.name, "") << p.pid;
      ++processes;
    }
  }
  EXPECT_GT(processes, 0u);
  EXPECT_THAT(serve::SnapshotJson(*here, {}, {}), Not(HasSubstr("tritonserver")));
  // The attribution sources' errors stay on the agent (its /metrics and log).
  EXPECT_THAT(serve::SnapshotJson(*here, {}, {}), Not(HasSubstr("secret.sock")));
}

TEST(CliRemoteSnapshot, NonFiniteValuesAreAbsentNotNull) {
  Snapshot snapshot = *SimulatedSnapshot();
  snapshot.samples[0].Set(Metric::kGpuTemp, std::nan(""));
  serve::RemoteSnapshot there = RoundTrip(snapshot, true);
  ASSERT_TRUE(there.snapshot);
  EXPECT_FALSE(there.snapshot->samples[0].Has(Metric::kGpuTemp));
}

// What a broken or hostile agent sends: an error naming the field, never a crash.
TEST(CliRemoteSnapshot, MalformedBodiesAreNamedErrors) {
  const std::string good = serve::SnapshotJson(*SimulatedSnapshot(), {}, {});
  auto replaced = [&good](const std::string& from, const std::string& to) {
    std::string body = good;
    const std::size_t at = body.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? body : body.replace(at, from.size(), to);
  };
  struct Case {
    std::string body, message;
  };
  const Case cases[] = {
      {"", "not a gpuscope snapshot"},
      {"[1,2]", "expected a JSON object"},
      {"{\"version\": 2}", "version 2, this gpuscope reads version 1"},
      {std::string(100000, '[') + std::string(100000, ']'), "not a gpuscope snapshot"},
      {replaced("\"version\":1", "\"version\":\"1\""), "version unknown"},
      {replaced("\"index\":0", "\"index\":-1"), "devices[0]: info: \"index\" has the wrong type"},
      {replaced("\"index\":0", "\"index\":4294967296"), "\"index\" has the wrong type"},
      {replaced("\"state\":\"ok\"", "\"state\":\"melting\""), "\"state\" is not ok"},
      {replaced("\"gpu_util\":", "\"gpu_util\":\"x\",\"z\":"), "values.\"gpu_util\""},
      {replaced("\"kinds\":1", "\"kinds\":9"), "\"kinds\" is out of range"},
      {replaced("\"devices\":[", "\"devices\":{\"a\":["), "not a gpuscope snapshot"},
      {replaced("\"devices\":[", "\"devices\":7,\"x\":["), "\"devices\" is not an array"},
      {replaced("\"verdicts\":[]", "\"verdicts\":[1]"), "\"verdicts\" holds a non-text"},
      {replaced("\"attribution\":{", "\"attribution\":7,\"a\":{"), "neither an object nor null"},
  };
  for (const Case& c : cases) {
    Result<serve::RemoteSnapshot> parsed = serve::ParseSnapshotJson(c.body);
    ASSERT_FALSE(parsed.ok()) << c.body.substr(0, 200);
    EXPECT_EQ(parsed.status().code(), Status::Code::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), HasSubstr(c.message)) << c.body.substr(0, 200);
  }
}

TEST(CliRemoteSnapshot, TextsFromTheAgentCannotDriveTheTerminal) {
  Snapshot snapshot = *SimulatedSnapshot();
  snapshot.gpus[0].name = "\x1b]0;pwned\x07\x1b[2J H100\n fake line";
  snapshot.samples[0].processes.at(0).name =
      "\x9b"
      "31m red";
  serve::RemoteSnapshot there = RoundTrip(snapshot, true);
  ASSERT_TRUE(there.snapshot);
  for (const std::string& out : {FormatSummary(*there.snapshot, {}), FormatGpuList(*there.snapshot),
                                 RenderFrame(*there.snapshot, {.color = false})}) {
    EXPECT_EQ(out.find('\x1b'), std::string::npos);
    EXPECT_EQ(out.find('\x07'), std::string::npos);
    EXPECT_THAT(out, Not(HasSubstr("\n fake line")));
  }
}

TEST(CliRemoteSnapshot, AgentOptionsAreUsageErrorsWithoutAgent) {
  EXPECT_EQ(ParseCommandLine({"--agent", "http://h:9400"})->command, "");
  Result<Invocation> inv = ParseCommandLine({"--ca-file", "ca.pem"});
  ASSERT_TRUE(inv.ok());
  std::ostringstream out, err;
  inv->out = &out;
  inv->err = &err;
  Status status = FindCommand(inv->command)->run(*inv);
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("go with --agent"));
  Result<Invocation> sim =
      ParseCommandLine({"-L", "--agent", "http://h:9400", "--simulate", "mixed-node"});
  ASSERT_TRUE(sim.ok());
  sim->out = &out;
  sim->err = &err;
  status = FindCommand(sim->command)->run(*sim);
  EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("do not go with --agent"));
  // A typo of the agent options gets the one message, with the near miss.
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"-L", "--agnt", "x"},
            "Unknown option \"--agnt\" for gpuscope list; did you mean --agent?"},
           {{"--agent", "http://h:1", "--ca-fil", "x"},
            "Unknown option \"--ca-fil\" for gpuscope; did you mean --ca-file?"},
           {{"top", "--agent", "http://h:1", "--basic-auth-usr", "x"},
            "did you mean "
            "--basic-auth-user?"}}) {
    Result<Invocation> typo = ParseCommandLine(args);
    ASSERT_TRUE(typo.ok());
    typo->out = &out;
    typo->err = &err;
    status = FindCommand(typo->command)->run(*typo);
    EXPECT_EQ(status.code(), Status::Code::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr(message));
  }
}

}  // namespace
}  // namespace gpuscope::cli
