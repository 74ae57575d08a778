#include <gtest/gtest.h>

#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/log.h"

namespace {

// Counts how often fmt formats it.
struct Counted {
  int* formatted;
};

}  // namespace

template <>
struct fmt::formatter<Counted> : fmt::formatter<int> {
  auto format(const Counted& counted, fmt::format_context& context) const {
    return fmt::formatter<int>::format(++*counted.formatted, context);
  }
};

namespace gpuscope::log {
namespace {

const std::regex kLine(
    R"(\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\] \[gpuscope\] \[(\w+)\] (.*))");

class LogTest : public ::testing::Test {
 protected:
  void TearDown() override { SetLevel(Level::kInfo); }
};

TEST_F(LogTest, ParsesTheNamesSpdlogKnew) {
  EXPECT_EQ(ParseLevel("trace"), Level::kTrace);
  EXPECT_EQ(ParseLevel("debug"), Level::kDebug);
  EXPECT_EQ(ParseLevel("info"), Level::kInfo);
  EXPECT_EQ(ParseLevel("warning"), Level::kWarn);
  EXPECT_EQ(ParseLevel("warn"), Level::kWarn);
  EXPECT_EQ(ParseLevel("error"), Level::kError);
  EXPECT_EQ(ParseLevel("err"), Level::kError);
  EXPECT_EQ(ParseLevel("critical"), Level::kCritical);
  EXPECT_EQ(ParseLevel("off"), Level::kOff);
  EXPECT_EQ(ParseLevel("WARN"), std::nullopt);
  EXPECT_EQ(ParseLevel("bogus"), std::nullopt);
  EXPECT_EQ(ParseLevel(""), std::nullopt);
}

TEST_F(LogTest, WritesSpdlogsDefaultFormatToStderr) {
  EXPECT_EQ(GetLevel(), Level::kInfo);
  SetLevel(Level::kDebug);
  ::testing::internal::CaptureStderr();
  Debug("a {} b", 42);
  Info("{}", "i");
  Warn("{}", "w");
  Error("{}", "e");
  Critical("{}", "c");
  std::istringstream lines(::testing::internal::GetCapturedStderr());
  std::vector<std::string> got;
  std::smatch m;
  for (std::string line; std::getline(lines, line);) {
    ASSERT_TRUE(std::regex_match(line, m, kLine)) << line;
    got.push_back(m[1].str() + " " + m[2].str());
  }
  EXPECT_EQ(got, (std::vector<std::string>{"debug a 42 b", "info i", "warning w", "error e",
                                           "critical c"}));
}

TEST_F(LogTest, BelowTheLevelNothingIsFormattedOrWritten) {
  int formatted = 0;
  SetLevel(Level::kWarn);
  ::testing::internal::CaptureStderr();
  Info("{}", Counted{&formatted});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(formatted, 0);
  SetLevel(Level::kOff);
  ::testing::internal::CaptureStderr();
  Critical("{}", Counted{&formatted});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(formatted, 0);
}

TEST_F(LogTest, LinesOfSeveralThreadsDoNotInterleave) {
  const std::string payload(200, 'x');
  ::testing::internal::CaptureStderr();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) Info("thread {} line {} {}", t, i, payload);
    });
  }
  for (std::thread& thread : threads) thread.join();
  std::istringstream lines(::testing::internal::GetCapturedStderr());
  int count = 0;
  const std::regex message(R"(thread \d line \d+ x{200})");
  std::smatch m;
  for (std::string line; std::getline(lines, line); ++count) {
    ASSERT_TRUE(std::regex_match(line, m, kLine)) << line;
    ASSERT_TRUE(std::regex_match(m[2].str(), message)) << line;
  }
  EXPECT_EQ(count, 8 * 200);
}

}  // namespace
}  // namespace gpuscope::log
