#include <gtest/gtest.h>

#include "cli/commands.h"
#include "cli/common_options.h"
#include "cli/exit_codes.h"
#include "cli/query_args.h"
#include "cli_test_snapshot.h"

namespace gpuscope::cli {
namespace {

using std::chrono::milliseconds;

Result<QueryArgs> Parse(std::vector<std::string> args) { return ParseQueryArgs(args); }

TEST(QueryArgsTest, LoopInMilliseconds) {
  Result<QueryArgs> a = Parse({"--query-gpu=index", "--format=csv", "-lms", "500"});
  ASSERT_TRUE(a.ok()) << a.status().message();
  EXPECT_EQ(a->loop, milliseconds(500));
  EXPECT_EQ(Parse({"--query-gpu=index", "--loop-ms=250"})->loop, milliseconds(250));
}

TEST(QueryArgsTest, LoopInSeconds) {
  EXPECT_EQ(Parse({"--query-gpu=index", "--loop=2"})->loop, milliseconds(2000));
  EXPECT_EQ(Parse({"--query-gpu=index", "-l", "3"})->loop, milliseconds(3000));
  EXPECT_EQ(Parse({"--query-gpu=index", "--loop", "1"})->loop, milliseconds(1000));
  // nvidia-smi's -l without a number is every 5 seconds.
  EXPECT_EQ(Parse({"--query-gpu=index", "-l"})->loop, milliseconds(5000));
  EXPECT_EQ(Parse({"-l", "--query-gpu=index"})->loop, milliseconds(5000));
  EXPECT_EQ(Parse({"--query-gpu=index"})->loop, std::nullopt);
}

TEST(QueryArgsTest, BadLoopValues) {
  EXPECT_EQ(Parse({"--query-gpu=index", "-lms", "abc"}).status().code(),
            Status::Code::kInvalidArgument);
  EXPECT_FALSE(Parse({"--query-gpu=index", "--loop=0"}).ok());
  EXPECT_FALSE(Parse({"--query-gpu=index", "-lms"}).ok());
}

TEST(QueryArgsTest, IdsSplitAtCommas) {
  Result<QueryArgs> a = Parse({"--query-gpu=index", "-i", "0,3"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->ids, (std::vector<std::string>{"0", "3"}));
  EXPECT_EQ(Parse({"--query-gpu=index", "--id=GPU-abc"})->ids, std::vector<std::string>{"GPU-abc"});
  EXPECT_EQ(Parse({"--query-gpu=index", "-i=1", "-i", "2"})->ids,
            (std::vector<std::string>{"1", "2"}));
}

TEST(QueryArgsTest, Format) {
  Result<QueryArgs> a = Parse({"--query-gpu=index", "--format=csv,noheader,nounits"});
  ASSERT_TRUE(a.ok());
  EXPECT_FALSE(a->csv.header);
  EXPECT_FALSE(a->csv.units);
  Result<QueryArgs> b = Parse({"--query-gpu", "index", "--format", "csv,nounits"});
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->csv.header);
  EXPECT_FALSE(b->csv.units);
  EXPECT_EQ(b->gpu_fields, "index");
  EXPECT_FALSE(ParseFormat("noheader").ok());
  EXPECT_FALSE(ParseFormat("csv,json").ok());
  EXPECT_TRUE(ParseFormat("nounits,csv").ok());
}

TEST(QueryArgsTest, FilenameAndApps) {
  Result<QueryArgs> a = Parse({"--query-compute-apps=pid,used_memory", "-f", "/tmp/out.csv"});
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->app_fields, "pid,used_memory");
  EXPECT_EQ(a->filename, "/tmp/out.csv");
  EXPECT_EQ(Parse({"--query-gpu=index", "--filename=x.csv"})->filename, "x.csv");
}

TEST(QueryArgsTest, Rejections) {
  EXPECT_FALSE(Parse({}).ok());                                                 // nothing to query
  EXPECT_FALSE(Parse({"--query-gpu=index", "--query-compute-apps=pid"}).ok());  // both
  Result<QueryArgs> unknown = Parse({"--query-gpu=index", "--bogus"});
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find("--bogus"), std::string::npos);
  EXPECT_EQ(Parse({"--help"})->help, QueryArgs::Help::kUsage);
  EXPECT_EQ(Parse({"--help-query-gpu"})->help, QueryArgs::Help::kGpuFields);
}

TEST(SelectGpusTest, ByIndexUuidAndBusId) {
  Snapshot snap = testing::TwoGpuSnapshot();
  EXPECT_EQ(*SelectGpus(snap, {}), (std::vector<std::size_t>{0, 1}));
  EXPECT_EQ(*SelectGpus(snap, {"1"}), std::vector<std::size_t>{1});
  EXPECT_EQ(*SelectGpus(snap, {snap.gpus[1].uuid}), std::vector<std::size_t>{1});
  EXPECT_EQ(*SelectGpus(snap, {"2a:00.0"}), std::vector<std::size_t>{1});
  EXPECT_EQ(*SelectGpus(snap, {"0000:18:00.0", "1"}), (std::vector<std::size_t>{0, 1}));
  Result<std::vector<std::size_t>> missing = SelectGpus(snap, {"0", "3"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kNotFound);
  EXPECT_NE(missing.status().message().find("3"), std::string::npos);
}

TEST(SelectGpusTest, MigInstancesAreNotRows) {
  Snapshot snap = testing::TwoGpuSnapshot();
  GpuInfo mig = snap.gpus[0];
  mig.gpu_instance_id = 1;
  mig.compute_instance_id = 0;
  snap.gpus.insert(snap.gpus.begin() + 1, mig);
  snap.samples.insert(snap.samples.begin() + 1, GpuSample{});
  EXPECT_EQ(*SelectGpus(snap, {}), (std::vector<std::size_t>{0, 2}));
}

TEST(CommonOptionsTest, ExtractedAnywhere) {
  std::vector<std::string> args = {"query", "--simulate", "training-8xh100", "--query-gpu=index",
                                   "--nvml-lib=/x/libnvidia-ml.so.1"};
  Result<CommonOptions> o = ExtractCommonOptions(&args);
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->simulate, "training-8xh100");
  EXPECT_EQ(o->nvml_lib, "/x/libnvidia-ml.so.1");
  EXPECT_EQ(args, (std::vector<std::string>{"query", "--query-gpu=index"}));
  std::vector<std::string> dangling = {"--simulate"};
  EXPECT_FALSE(ExtractCommonOptions(&dangling).ok());
}

TEST(CommonOptionsTest, LibraryPrecedence) {
  auto no_env = [](const char*) -> const char* { return nullptr; };
  auto env = [](const char* name) -> const char* {
    return std::string(name) == "GPUSCOPE_NVML_LIB" ? "/env/libnvml.so" : nullptr;
  };
  auto exists_installed = [](const std::string& p) { return p.find("/lib/gpuscope/") != p.npos; };
  auto none = [](const std::string&) { return false; };
  EXPECT_EQ(*ChooseNvmlLibrary({}, no_env, "/opt/bin", none), "libnvidia-ml.so.1");
  EXPECT_EQ(*ChooseNvmlLibrary({}, env, "/opt/bin", none), "/env/libnvml.so");
  EXPECT_EQ(*ChooseNvmlLibrary({"/flag.so", ""}, env, "/opt/bin", none), "/flag.so");
  EXPECT_EQ(*ChooseNvmlLibrary({"", "x"}, env, "/opt/bin", exists_installed),
            "/opt/bin/../lib/gpuscope/sim/libnvidia-ml.so.1");
  Result<std::string> missing = ChooseNvmlLibrary({"", "x"}, env, "/opt/bin", none);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("/opt/bin/sim/libnvidia-ml.so.1"), std::string::npos);
}

TEST(CommonOptionsTest, ScenarioName) {
  auto no_env = [](const char*) -> const char* { return nullptr; };
  auto env = [](const char*) -> const char* { return "/tmp/my-node.yaml"; };
  EXPECT_EQ(ScenarioName({"", "training-8xh100"}, no_env), "training-8xh100");
  EXPECT_EQ(ScenarioName({}, env), "my-node");
  EXPECT_EQ(ScenarioName({}, no_env), "");
}

TEST(CommandLineTest, Dispatch) {
  EXPECT_EQ(ParseCommandLine({})->command, "");
  EXPECT_EQ(ParseCommandLine({"--simulate", "x"})->command, "");
  Result<Invocation> q = ParseCommandLine({"--simulate", "x", "query", "--query-gpu=index"});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->command, "query");
  EXPECT_EQ(q->args, std::vector<std::string>{"--query-gpu=index"});
  EXPECT_EQ(q->all_args, (std::vector<std::string>{"--simulate", "x", "--query-gpu=index"}));
  EXPECT_EQ(q->common.simulate, "x");
  // nvidia-smi habit: flags without the command word.
  Result<Invocation> smi = ParseCommandLine({"--query-gpu=index", "--format=csv"});
  ASSERT_TRUE(smi.ok());
  EXPECT_EQ(smi->command, "query");
  EXPECT_EQ(smi->args.size(), 2u);
  EXPECT_EQ(ParseCommandLine({"--help"})->command, "help");
  EXPECT_EQ(ParseCommandLine({"--version"})->command, "version");
  EXPECT_EQ(ParseCommandLine({"frobnicate"}).status().code(), Status::Code::kInvalidArgument);
  EXPECT_FALSE(ParseCommandLine({"-x"}).ok());
}

TEST(CommandLineTest, EveryRowIsFoundAndListed) {
  std::string usage = Usage();
  for (const Command& command : Commands()) {
    EXPECT_EQ(FindCommand(command.name), &command);
    ASSERT_NE(command.run, nullptr);
    EXPECT_NE(usage.find(command.summary), std::string::npos) << command.name;
  }
  EXPECT_NE(FindCommand("query"), nullptr);
  EXPECT_NE(FindCommand("version"), nullptr);
  EXPECT_NE(FindCommand(""), nullptr);
}

TEST(CommandLineTest, ExitCodes) {
  EXPECT_EQ(ExitCodeFor(Status::Ok()), 0);
  EXPECT_EQ(ExitCodeFor(Status::InvalidArgument("x")), 2);
  EXPECT_EQ(ExitCodeFor(Status::NotFound("x")), 6);
  EXPECT_EQ(ExitCodeFor(Status::NotSupported("x")), 3);
  EXPECT_EQ(ExitCodeFor(Status::Internal("x")), 255);
  // Unavailable: a source over a socket (agent, Prometheus), or NVML with its return code.
  EXPECT_EQ(ExitCodeFor(Status::Unavailable("x")), 21);
  EXPECT_EQ(ExitCodeFor(NvmlUnavailable("x")), 9);
  EXPECT_EQ(ExitCodeFor(GpuLost("x")), 15);
  // nvidia-smi's code for the NVML return code where it has one.
  EXPECT_EQ(ExitCodeFor(Status::Unavailable("x").WithDetail(9)), 9);    // DRIVER_NOT_LOADED
  EXPECT_EQ(ExitCodeFor(Status::Unavailable("x").WithDetail(15)), 15);  // GPU_IS_LOST
  EXPECT_EQ(ExitCodeFor(Status::NotSupported("x").WithDetail(4)), 4);   // NO_PERMISSION
  EXPECT_EQ(ExitCodeFor(Status::NotFound("x").WithDetail(12)), 9);      // LIBRARY_NOT_FOUND
  EXPECT_EQ(ExitCodeFor(Status::NotFound("x").WithDetail(6)), 6);
  EXPECT_EQ(ExitCodeFor(Status::Internal("x").WithDetail(999)), 255);
}

// One table: --help prints it, and every code main can return is a row of it.
TEST(CommandLineTest, HelpPrintsTheExitCodeTable) {
  const std::string usage = Usage();
  for (const ExitCodeRow& row : ExitCodeTable()) {
    EXPECT_NE(usage.find("  " + std::to_string(static_cast<int>(row.code))), std::string::npos);
    EXPECT_NE(usage.find(std::string(row.meaning)), std::string::npos) << row.name;
  }
  EXPECT_NE(ExitCodeMarkdown().find("| 15 | GPU lost | a GPU fell off the bus"), std::string::npos);
}

TEST(CommandLineTest, UnknownCommandAndOptionSuggestTheNearMiss) {
  EXPECT_EQ(ParseCommandLine({"helth"}).status().message(),
            "Unknown command \"helth\"; did you mean health? See gpuscope --help.");
  EXPECT_EQ(ParseCommandLine({"--simulat", "x"}).status().message(),
            "Unknown option \"--simulat\" for gpuscope; did you mean --simulate? "
            "See gpuscope --help.");
}

}  // namespace
}  // namespace gpuscope::cli
