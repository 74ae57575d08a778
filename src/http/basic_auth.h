// HTTP basic authentication against bcrypt hashes (exporter-toolkit's basic_auth_users).
//
// A bcrypt check costs tens of milliseconds (cost 10), so the server runs Verify() on a small
// worker pool (http/verifier.h), never on its event threads, and remembers verified pairs:
// Cached() is a keyed hash (HMAC-SHA-256 under a random per-instance key) of user and password,
// never the password itself, looked up in a bounded set. A BasicAuth is built per web-config
// load, so a reload forgets every verified pair.
//
// Unknown users are verified against a dummy hash of the highest configured cost, so the time a
// check takes does not tell which user names exist (users with different costs still differ;
// the web-config parser warns about that).
// Thread safety: every method may be called from any number of threads at once.
#pragma once

#include <map>
#include <optional>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace gpuscope::http {

struct Credentials {
  std::string user;
  std::string password;
};

// Parses an Authorization header value "Basic base64(user:password)". The scheme is
// case-insensitive (RFC 7617). nullopt when the scheme is another, the base64 is malformed,
// there is no ':' or the user or password holds a NUL or another control character.
std::optional<Credentials> ParseBasicAuthorization(std::string_view value);

// A well-formed bcrypt hash of `cost` that no password matches (its salt and digest bits are
// all zero); checking a password against it costs as much as against a real hash of that cost.
std::string DummyBcryptHash(int cost);

// True when `password` hashes to `hash` under crypt_r (bcrypt); compares in constant time.
bool VerifyBcrypt(std::string_view password, const std::string& hash);

class BasicAuth {
 public:
  // users: user -> bcrypt hash, already validated (see BcryptHashProblem).
  explicit BasicAuth(std::map<std::string, std::string> users);

  bool enabled() const { return !users_.empty(); }

  // True when this pair was verified before (no bcrypt; microseconds).
  bool Cached(const Credentials& credentials) const;

  // Runs bcrypt (slow): true when the user exists and the password matches. Success is cached.
  bool Verify(const Credentials& credentials) const;

  // Cached() || Verify().
  bool Check(const Credentials& credentials) const;

 private:
  static constexpr size_t kMaxCached = 1024;  // bounds memory if many passwords rotate

  std::string CacheKey(const Credentials& credentials) const;

  std::map<std::string, std::string, std::less<>> users_;
  std::string dummy_hash_;  // same cost as the most expensive user
  std::string key_;         // random HMAC key of this instance
  mutable std::shared_mutex mu_;
  mutable std::unordered_set<std::string> verified_;  // keyed digests of successful checks
};

}  // namespace gpuscope::http
