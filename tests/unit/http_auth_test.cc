// Basic-auth parsing and checks, the bcrypt worker pool and the per-client failure limiter.
#include <crypt.h>
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <memory>
#include <thread>

#include "http/basic_auth.h"
#include "http/verifier.h"
#include "http/web_config.h"

namespace gpuscope::http {
namespace {

std::string Bcrypt(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2y$", cost, nullptr, 0, salt, sizeof(salt)), nullptr);
  auto data = std::make_unique<crypt_data>();
  return crypt_r(password.c_str(), salt, data.get());
}

std::optional<Credentials> Parse(std::string_view value) { return ParseBasicAuthorization(value); }

TEST(BasicAuthHeader, DecodesUserAndPassword) {
  std::optional<Credentials> c = Parse("Basic cHJvbTpzM2NyZXQ=");  // prom:s3cret
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->user, "prom");
  EXPECT_EQ(c->password, "s3cret");
  std::optional<Credentials> colon = Parse("Basic cHJvbTphOmI=");  // prom:a:b
  ASSERT_TRUE(colon.has_value());
  EXPECT_EQ(colon->password, "a:b");                           // only the first ':' separates
  std::optional<Credentials> empty = Parse("Basic cHJvbTo=");  // prom:
  ASSERT_TRUE(empty.has_value());
  EXPECT_EQ(empty->password, "");
}

TEST(BasicAuthHeader, SchemeIsCaseInsensitive) {
  for (const char* value :
       {"basic cHJvbTpzM2NyZXQ=", "BASIC cHJvbTpzM2NyZXQ=", "bAsIc   cHJvbTpzM2NyZXQ="}) {
    std::optional<Credentials> c = Parse(value);
    ASSERT_TRUE(c.has_value()) << value;
    EXPECT_EQ(c->user, "prom");
  }
}

TEST(BasicAuthHeader, RejectsNulControlsAndMalformedInput) {
  EXPECT_FALSE(Parse("Basic cHJvbTpzM2NyZXQAeA==").has_value());  // prom:s3cret\0x
  EXPECT_FALSE(Parse("Basic cHIAb206czNjcmV0").has_value());      // pr\0om:s3cret
  EXPECT_FALSE(Parse("Basic cHJvbTpzMwpjcmV0").has_value());      // prom:s3\ncret
  EXPECT_FALSE(Parse("Basic cHJvbXMzY3JldA==").has_value());      // no colon
  EXPECT_FALSE(Parse("Basic cHJvbTpzM2NyZXQ").has_value());       // length not a multiple of 4
  EXPECT_FALSE(Parse("Basic cHJv!TpzM2NyZXQ=").has_value());      // not base64
  EXPECT_FALSE(Parse("Bearer cHJvbTpzM2NyZXQ=").has_value());
  EXPECT_FALSE(Parse("BasiccHJvbTpzM2NyZXQ=").has_value());
  EXPECT_FALSE(Parse("").has_value());
}

TEST(BasicAuth, ChecksBcryptAndCachesSuccess) {
  std::string hash = Bcrypt("s3cret", 4);
  ASSERT_EQ(BcryptHashProblem(hash), "");
  EXPECT_TRUE(VerifyBcrypt("s3cret", hash));
  EXPECT_FALSE(VerifyBcrypt("s3cret!", hash));
  EXPECT_FALSE(VerifyBcrypt(std::string("s3cret\0x", 8), hash));
  BasicAuth auth({{"prom", hash}});
  EXPECT_TRUE(auth.enabled());
  EXPECT_FALSE(auth.Cached({"prom", "s3cret"}));
  EXPECT_TRUE(auth.Check({"prom", "s3cret"}));
  EXPECT_TRUE(auth.Cached({"prom", "s3cret"}));
  EXPECT_FALSE(auth.Cached({"prom", "s3cret!"}));
  EXPECT_FALSE(auth.Check({"prom", "wrong"}));
  EXPECT_FALSE(auth.Cached({"prom", "wrong"}));  // failures are never cached
  EXPECT_FALSE(auth.Check({"other", "s3cret"}));
  EXPECT_FALSE(BasicAuth({}).enabled());
  // A new instance (a reload) starts with an empty cache.
  EXPECT_FALSE(BasicAuth({{"prom", hash}}).Cached({"prom", "s3cret"}));
}

TEST(BasicAuth, DummyHashCostsARealCheck) {
  // crypt_r must run bcrypt on the dummy hash, not reject it at once (a cheap failure would tell
  // unknown user names apart): its output is a bcrypt hash with the same setting.
  for (int cost : {4, 10, 17}) {
    std::string dummy = DummyBcryptHash(cost);
    ASSERT_EQ(BcryptHashProblem(dummy), "") << dummy;
    auto data = std::make_unique<crypt_data>();
    if (cost > 10) continue;  // the shape is enough; do not spend seconds
    const char* out = crypt_r("guess", dummy.c_str(), data.get());
    ASSERT_NE(out, nullptr);
    EXPECT_EQ(std::string(out).substr(0, 29), dummy.substr(0, 29));
    EXPECT_NE(std::string(out), dummy);
  }
}

TEST(VerifierPool, RunsJobsAndBoundsTheQueue) {
  VerifierPool pool(1, 2);
  std::promise<void> release;
  std::shared_future<void> gate = release.get_future().share();
  std::atomic<int> done{0};
  std::atomic<bool> started{false};
  // The worker takes the first job and blocks; two more fill the queue.
  ASSERT_TRUE(pool.Reserve());
  pool.Submit([&] {
    started = true;
    gate.wait();
    ++done;
  });
  while (!started.load()) std::this_thread::yield();
  ASSERT_TRUE(pool.Reserve());
  pool.Submit([&] { ++done; });
  ASSERT_TRUE(pool.Reserve());
  pool.Submit([&] { ++done; });
  EXPECT_FALSE(pool.Reserve());  // full: the caller answers 503
  release.set_value();
  while (done.load() < 3) std::this_thread::yield();
  EXPECT_TRUE(pool.Reserve());
  pool.Submit([&] { ++done; });
}

TEST(FailureLimiter, AllowsABurstThenOnePerRefill) {
  using namespace std::chrono_literals;
  FailureLimiter limiter(3, 1000ms);
  auto t0 = FailureLimiter::Clock::now();
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.TryAcquire("10.0.0.1", t0));
  std::chrono::seconds wait{0};
  EXPECT_FALSE(limiter.TryAcquire("10.0.0.1", t0, &wait));  // also while checks are in flight
  EXPECT_EQ(wait, 1s);
  EXPECT_TRUE(limiter.TryAcquire("10.0.0.2", t0));  // per client
  EXPECT_FALSE(limiter.TryAcquire("10.0.0.1", t0 + 900ms));
  EXPECT_TRUE(limiter.TryAcquire("10.0.0.1", t0 + 1000ms));
  EXPECT_FALSE(limiter.TryAcquire("10.0.0.1", t0 + 1500ms));
}

TEST(FailureLimiter, SuccessGivesTheTokenBack) {
  using namespace std::chrono_literals;
  FailureLimiter limiter(1, 1000ms);
  auto t0 = FailureLimiter::Clock::now();
  for (int i = 0; i < 5; ++i) {
    ASSERT_TRUE(limiter.TryAcquire("10.0.0.1", t0)) << i;
    limiter.Succeeded("10.0.0.1");
  }
  EXPECT_TRUE(limiter.TryAcquire("10.0.0.1", t0));
  EXPECT_FALSE(limiter.TryAcquire("10.0.0.1", t0));  // a failure keeps it
}

TEST(FailureLimiter, TableIsBounded) {
  using namespace std::chrono_literals;
  FailureLimiter limiter(1, 1000ms, 4);
  auto t0 = FailureLimiter::Clock::now();
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(limiter.TryAcquire("c" + std::to_string(i), t0));
  // The latest client is tracked; most earlier ones were forgotten to keep the table small.
  EXPECT_FALSE(limiter.TryAcquire("c99", t0));
  int forgotten = 0;
  for (int i = 0; i < 95; ++i) forgotten += limiter.TryAcquire("c" + std::to_string(i), t0);
  EXPECT_GE(forgotten, 90);
}

}  // namespace
}  // namespace gpuscope::http
