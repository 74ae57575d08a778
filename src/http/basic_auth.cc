#include "http/basic_auth.h"

#include <crypt.h>
#include <gnutls/crypto.h>
#include <sys/random.h>

#include <algorithm>
#include <array>
#include <memory>
#include <mutex>

namespace gpuscope::http {
namespace {

constexpr size_t kKeyBytes = 32;

bool ConstantTimeEqual(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

int Base64Value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

// Standard base64 with padding (RFC 4648 section 4); nullopt on any other character.
std::optional<std::string> DecodeBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') {
    ++padding;
  }
  std::string out;
  uint32_t bits = 0;
  int count = 0;
  for (size_t i = 0; i < text.size() - padding; ++i) {
    int value = Base64Value(text[i]);
    if (value < 0) return std::nullopt;
    bits = (bits << 6) | static_cast<uint32_t>(value);
    if (++count == 4) {
      out.push_back(static_cast<char>(bits >> 16));
      out.push_back(static_cast<char>(bits >> 8));
      out.push_back(static_cast<char>(bits));
      bits = 0;
      count = 0;
    }
  }
  if (count == 2) out.push_back(static_cast<char>(bits >> 4));
  if (count == 3) {
    out.push_back(static_cast<char>(bits >> 10));
    out.push_back(static_cast<char>(bits >> 2));
  }
  return out;
}

bool HasControl(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
}

int BcryptCost(const std::string& hash) {
  return hash.size() > 6 ? (hash[4] - '0') * 10 + (hash[5] - '0') : 10;
}

}  // namespace

std::optional<Credentials> ParseBasicAuthorization(std::string_view value) {
  constexpr std::string_view kScheme = "basic";
  if (value.size() <= kScheme.size() || value[kScheme.size()] != ' ') return std::nullopt;
  for (size_t i = 0; i < kScheme.size(); ++i) {
    char c = value[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != kScheme[i]) return std::nullopt;
  }
  std::string_view encoded = value.substr(kScheme.size());
  while (!encoded.empty() && encoded.front() == ' ') encoded.remove_prefix(1);
  while (!encoded.empty() && encoded.back() == ' ') encoded.remove_suffix(1);
  std::optional<std::string> decoded = DecodeBase64(encoded);
  if (!decoded) return std::nullopt;
  size_t colon = decoded->find(':');
  if (colon == std::string::npos) return std::nullopt;
  Credentials credentials{decoded->substr(0, colon), decoded->substr(colon + 1)};
  if (HasControl(credentials.user) || HasControl(credentials.password)) return std::nullopt;
  return credentials;
}

std::string DummyBcryptHash(int cost) {
  std::string prefix = "$2b$" + std::string(cost < 10 ? "0" : "") + std::to_string(cost) + "$";
  return prefix + std::string(53, '.');
}

bool VerifyBcrypt(std::string_view password, const std::string& hash) {
  if (password.find('\0') != std::string_view::npos) return false;
  auto data = std::make_unique<crypt_data>();  // ~32 KiB: too big for a worker's stack
  std::string plain(password);
  const char* out = crypt_r(plain.c_str(), hash.c_str(), data.get());
  // crypt_r returns a string starting with '*' on failure, which never equals a valid hash.
  return out != nullptr && ConstantTimeEqual(out, hash);
}

BasicAuth::BasicAuth(std::map<std::string, std::string> users)
    : users_(users.begin(), users.end()), key_(kKeyBytes, '\0') {
  int cost = 4;
  for (const auto& [user, hash] : users_) cost = std::max(cost, BcryptCost(hash));
  dummy_hash_ = DummyBcryptHash(cost);
  // getrandom, not gnutls_rnd: an agent without users must not load GnuTLS for this.
  if (getrandom(key_.data(), key_.size(), 0) != static_cast<ssize_t>(key_.size())) {
    // No randomness: the cache still works, keyed by a fixed key; it only weakens the
    // protection of a memory dump, so keep serving.
    key_.assign(kKeyBytes, 'k');
  }
}

std::string BasicAuth::CacheKey(const Credentials& credentials) const {
  std::string input;
  input.reserve(credentials.user.size() + credentials.password.size() + 1);
  input.append(credentials.user).append(1, '\0').append(credentials.password);
  std::string digest(32, '\0');
  gnutls_hmac_fast(GNUTLS_MAC_SHA256, key_.data(), key_.size(), input.data(), input.size(),
                   digest.data());
  return digest;
}

bool BasicAuth::Cached(const Credentials& credentials) const {
  std::string key = CacheKey(credentials);
  std::shared_lock lock(mu_);
  return verified_.count(key) != 0;
}

bool BasicAuth::Verify(const Credentials& credentials) const {
  auto it = users_.find(credentials.user);
  if (it == users_.end()) {
    // Spend the same time as for the most expensive user, so timing does not reveal names.
    VerifyBcrypt(credentials.password, dummy_hash_);
    return false;
  }
  if (!VerifyBcrypt(credentials.password, it->second)) return false;
  std::string key = CacheKey(credentials);
  std::unique_lock lock(mu_);
  if (verified_.size() >= kMaxCached) verified_.clear();
  verified_.insert(std::move(key));
  return true;
}

bool BasicAuth::Check(const Credentials& credentials) const {
  return Cached(credentials) || Verify(credentials);
}

}  // namespace gpuscope::http
