#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/options.h"

namespace gpuscope::cli {
namespace {

using ::testing::HasSubstr;

std::vector<Option> Scan(std::vector<std::string> args, Status* status) {
  std::vector<Option> seen;
  *status = ForEachOption(args, "demo", {"--window", "-i"}, [&](const Option& o) {
    seen.push_back(o);
    return Status::Ok();
  });
  return seen;
}

TEST(Options, ValuesInlineOrNextSwitchesAlone) {
  Status status;
  auto seen = Scan({"--window=5m", "-i", "0,3", "--json", "--window", "90s"}, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_EQ(seen[0].flag, "--window");
  EXPECT_EQ(seen[0].value, "5m");
  EXPECT_TRUE(seen[0].inline_value);
  EXPECT_EQ(seen[1].value, "0,3");
  EXPECT_FALSE(seen[1].inline_value);
  EXPECT_EQ(seen[2].flag, "--json");
  EXPECT_EQ(seen[2].value, "");
  EXPECT_EQ(seen[3].value, "90s");
}

TEST(Options, MissingValueAndUnknownOptionSentences) {
  Status status;
  Scan({"--json", "-i"}, &status);
  EXPECT_EQ(status.message(), "Option -i needs a value; see gpuscope demo --help.");
  Option odd{"--odd", "1", true, "--odd=1"};
  EXPECT_EQ(UnknownOption(odd, "demo").message(),
            "Unknown option \"--odd=1\" for gpuscope demo; see gpuscope demo --help.");
}

TEST(Options, HandlerErrorStopsTheWalk) {
  int calls = 0;
  Status status = ForEachOption({"-a", "-b"}, "demo", {}, [&](const Option& o) {
    ++calls;
    return o.flag == "-a" ? Status::InvalidArgument("no -a") : Status::Ok();
  });
  EXPECT_EQ(status.message(), "no -a");
  EXPECT_EQ(calls, 1);
}

TEST(ParseCommandDuration, Forms) {
  EXPECT_DOUBLE_EQ(*ParseCommandDuration("300"), 300);
  EXPECT_DOUBLE_EQ(*ParseCommandDuration("5m"), 300);
  EXPECT_DOUBLE_EQ(*ParseCommandDuration("1m30s"), 90);
  EXPECT_DOUBLE_EQ(*ParseCommandDuration("1h"), 3600);
  for (const char* bad : {"", "m", "5x", "1m30", "-5m", "0"}) {
    Result<double> r = ParseCommandDuration(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_THAT(r.status().message(), HasSubstr("bad duration"));
    }
  }
}

}  // namespace
}  // namespace gpuscope::cli
