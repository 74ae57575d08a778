// The contracts of include/gpuscope/status.h. It lives in nvml_tests because
// nvml is the lowest area and the first to use Status.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "gpuscope/status.h"

namespace gpuscope {
namespace {

class StatusDeathTest : public ::testing::Test {
 protected:
  // Fork-and-exec: safe even if another test left a thread running.
  void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

TEST(ResultTest, HoldsAValueOrAFailedStatus) {
  Result<std::string> good = std::string("gpu0");
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(good.value(), "gpu0");
  EXPECT_EQ(good->size(), 4u);
  EXPECT_TRUE(good.status().ok());

  Result<std::string> bad = Status::NotFound("no such GPU");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), Status::Code::kNotFound);
  EXPECT_EQ(bad.status().message(), "no such GPU");
}

TEST(ResultTest, MovesTheValueOut) {
  Result<std::unique_ptr<int>> r = std::make_unique<int>(7);
  std::unique_ptr<int> taken = std::move(r).value();
  ASSERT_NE(taken, nullptr);
  EXPECT_EQ(*taken, 7);
}

TEST_F(StatusDeathTest, ValueOfAFailedResultAbortsWithItsMessage) {
  Result<int> bad = Status::Unavailable("GPU 3 is lost");
  EXPECT_DEATH((void)bad.value(), "value\\(\\) of a failed Result: GPU 3 is lost");
  EXPECT_DEATH((void)*bad, "value\\(\\) of a failed Result");
  const Result<std::string> cbad = Status::Internal("broken");
  EXPECT_DEATH((void)cbad->size(), "value\\(\\) of a failed Result: broken");
  EXPECT_DEATH((void)std::move(bad).value(), "failed Result");
}

TEST_F(StatusDeathTest, ResultFromAnOkStatusAborts) {
  EXPECT_DEATH((void)Result<int>(Status::Ok()), "Result built from an OK Status");
  EXPECT_DEATH((void)Result<std::string>(Status()), "Result built from an OK Status");
}

// Uses the macro inside a class with a `status_` member, the name the old
// macro declared: its local hid the member (a -Wshadow error, and a trap for
// code in the macro's argument that meant the member).
class Pipeline {
 public:
  Status Run(bool fail_first, bool fail_second) {
    GPUSCOPE_RETURN_IF_ERROR(Step(fail_first, "first"));
    GPUSCOPE_RETURN_IF_ERROR(Step(fail_second, "second"));
    status_ = Status::Ok();
    return status_;
  }
  Result<int> Count(bool fail) {
    GPUSCOPE_RETURN_IF_ERROR(Step(fail, "count"));
    return ++steps_;
  }
  // With the old macro this line read `Status status_ = (status_);`: the
  // local initialized from itself instead of the member.
  Status LastRun() const {
    GPUSCOPE_RETURN_IF_ERROR(status_);
    return Status::Ok();
  }
  int steps() const { return steps_; }

 private:
  Status Step(bool fail, const std::string& name) {
    ++steps_;
    return fail ? Status::Internal(name + " failed") : Status::Ok();
  }
  Status status_ = Status::Internal("never ran");
  int steps_ = 0;
};

TEST(ReturnIfErrorTest, ReturnsTheFirstFailureAndStops) {
  Pipeline p;
  Status s = p.Run(true, false);
  EXPECT_EQ(s.message(), "first failed");
  EXPECT_EQ(p.steps(), 1);
  s = p.Run(false, true);
  EXPECT_EQ(s.message(), "second failed");
  EXPECT_EQ(p.steps(), 3);
  EXPECT_TRUE(p.Run(false, false).ok());
}

TEST(ReturnIfErrorTest, AnArgumentNamedLikeTheOldLocalMeansTheMember) {
  Pipeline p;
  EXPECT_EQ(p.LastRun().message(), "never ran");
  ASSERT_TRUE(p.Run(false, false).ok());
  EXPECT_TRUE(p.LastRun().ok());
}

TEST(ReturnIfErrorTest, WorksInFunctionsReturningResult) {
  Pipeline p;
  Result<int> failed = p.Count(true);
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().message(), "count failed");
  Result<int> counted = p.Count(false);
  ASSERT_TRUE(counted.ok());
  EXPECT_EQ(*counted, 3);
}

}  // namespace
}  // namespace gpuscope
