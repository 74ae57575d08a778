#include "http/basic_auth.h"

#include <crypt.h>
#include <gnutls/crypto.h>

#include <memory>
#include <mutex>

namespace gpuscope::http {
namespace {

std::string CacheKey(const std::string& hash, std::string_view user, std::string_view password) {
  std::string input;
  input.reserve(hash.size() + user.size() + password.size() + 2);
  input.append(hash).append(1, '\0').append(user).append(1, '\0').append(password);
  std::string digest(32, '\0');
  gnutls_hash_fast(GNUTLS_DIG_SHA256, input.data(), input.size(), digest.data());
  return digest;
}

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

}  // namespace

bool VerifyBcrypt(std::string_view password, const std::string& hash) {
  if (password.find('\0') != std::string_view::npos) return false;
  auto data = std::make_unique<crypt_data>();  // ~32 KiB: too big for a worker's stack
  std::string plain(password);
  const char* out = crypt_r(plain.c_str(), hash.c_str(), data.get());
  // crypt_r returns a string starting with '*' on failure, which never equals a valid hash.
  return out != nullptr && ConstantTimeEqual(out, hash);
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users)
    : users_(users.begin(), users.end()) {}

bool BasicAuth::Check(std::string_view user, std::string_view password) const {
  auto it = users_.find(user);
  if (it == users_.end()) {
    // Spend the same time as for a known user, so timing does not reveal user names.
    if (!users_.empty()) VerifyBcrypt(password, users_.begin()->second);
    return false;
  }
  std::string key = CacheKey(it->second, user, password);
  {
    std::shared_lock lock(mu_);
    if (verified_.count(key) != 0) return true;
  }
  if (!VerifyBcrypt(password, it->second)) return false;
  std::unique_lock lock(mu_);
  if (verified_.size() >= kMaxCached) verified_.clear();
  verified_.insert(std::move(key));
  return true;
}

}  // namespace gpuscope::http
