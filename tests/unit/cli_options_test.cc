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
            "Unknown option \"--odd=1\" for gpuscope demo. See gpuscope demo --help.");
}

// Issue 44: the near miss is suggested, from the flags the command's help shows.
TEST(Options, UnknownOptionSuggestsTheNearMiss) {
  const std::string help = "  -a, --address ADDR  listen here\n  [--window 5m] [--json]\n";
  EXPECT_EQ(FlagsInHelp(help), (std::vector<std::string>{"-a", "--address", "--window", "--json"}));
  Option typo{"--adress", ":1", true, "--adress=:1"};
  EXPECT_EQ(UnknownOption(typo, "serve", help).message(),
            "Unknown option \"--adress=:1\" for gpuscope serve; did you mean --address? "
            "See gpuscope serve --help.");
  EXPECT_THAT(UnknownOption({"--jsn", "", false, "--jsn"}, "x", help).message(),
              HasSubstr("did you mean --json?"));
  // No near miss, and no guess for a one-letter flag.
  EXPECT_THAT(UnknownOption({"--frobnicate", "", false, "--frobnicate"}, "x", help).message(),
              ::testing::Not(HasSubstr("did you mean")));
  EXPECT_THAT(UnknownOption({"-b", "", false, "-b"}, "x", help).message(),
              ::testing::Not(HasSubstr("did you mean")));
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
  EXPECT_DOUBLE_EQ(*ParseCommandDuration("500ms"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseCommandDuration("1s500ms"), 1.5);
  EXPECT_DOUBLE_EQ(*ParseCommandDuration("7d"), 7 * 86400);
  for (const char* bad : {"", "m", "5x", "1m30", "-5m", "0", "ms"}) {
    Result<double> r = ParseCommandDuration(bad);
    EXPECT_FALSE(r.ok()) << bad;
    if (!r.ok()) {
      EXPECT_THAT(r.status().message(), HasSubstr("is not a duration"));
      EXPECT_THAT(r.status().message(), HasSubstr("a bare number is seconds"));
    }
  }
}

// Issue 44: `top -d 5000` says how the bare number was read and how to write milliseconds.
TEST(ParseFlagDuration, RangeErrorsSayTheBareUnit) {
  Option d{"-d", "5000", false, "-d"};
  Result<double> r = ParseFlagDuration(d, 0.1, 3600);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "-d: '5000' is 5000s (a bare number is seconds); want 100ms to 1h "
            "(write 5000ms for milliseconds)");
  EXPECT_DOUBLE_EQ(*ParseFlagDuration({"-d", "5000ms", false, "-d"}, 0.1, 3600), 5);
  Result<double> big = ParseFlagDuration({"--window", "999h", true, "--window=999h"}, 1, 86400);
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().message(), "--window: '999h' is 999h; want 1s to 1d");
  EXPECT_THAT(ParseFlagDuration({"--watch", "soon", false, "--watch"}, 1, 60).status().message(),
              HasSubstr("--watch: 'soon' is not a duration"));
}

}  // namespace
}  // namespace gpuscope::cli
