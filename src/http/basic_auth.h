// HTTP basic authentication against bcrypt hashes (exporter-toolkit's basic_auth_users).
// A bcrypt check costs tens of milliseconds, so successful (user, password) pairs are remembered
// in memory, keyed by a SHA-256 digest of hash, user and password (never the password itself):
// a scraper that authenticates every 15 s pays bcrypt once.
// Thread safety: Check() may be called from any number of threads at once.
#pragma once

#include <map>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_set>

namespace gpuscope::http {

// True when `password` hashes to `hash` under crypt_r (bcrypt); compares in constant time.
bool VerifyBcrypt(std::string_view password, const std::string& hash);

class BasicAuth {
 public:
  // users: user -> bcrypt hash, already validated (see BcryptHashProblem).
  explicit BasicAuth(std::map<std::string, std::string> users);

  bool enabled() const { return !users_.empty(); }

  // True when the user exists and the password matches its hash.
  bool Check(std::string_view user, std::string_view password) const;

 private:
  static constexpr size_t kMaxCached = 1024;  // bounds memory if many passwords rotate

  std::map<std::string, std::string, std::less<>> users_;
  mutable std::shared_mutex mu_;
  mutable std::unordered_set<std::string> verified_;  // digests of successful checks
};

}  // namespace gpuscope::http
