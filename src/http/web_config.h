// Prometheus exporter-toolkit web-config file (the `--web-config-file` users already have for
// dcgm-exporter and node_exporter): TLS, client certificates, response headers, basic auth.
//
//   tls_server_config:   {cert_file, key_file, client_ca_file, client_auth_type,
//                         min_version, max_version, cipher_suites, curve_preferences,
//                         prefer_server_cipher_suites}
//   http_server_config:  {headers: {Name: value}, http2}
//   basic_auth_users:    {user: bcrypt-hash}
//
// ParseWebConfig is a pure function of the text; LoadWebConfig reads the file. Errors read
// `<file>:<line>: <problem>`. Relative certificate paths are resolved against the directory of
// the config file, as exporter-toolkit does.
// Thread safety: plain values; safe to share once built.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::http {

// Go crypto/tls names, in the order of increasing strictness.
enum class ClientAuth {
  kNoClientCert,
  kRequestClientCert,
  kRequireAnyClientCert,
  kVerifyClientCertIfGiven,
  kRequireAndVerifyClientCert,
};

enum class TlsVersion { kTls10, kTls11, kTls12, kTls13 };

// A Go crypto/tls cipher suite name (exporter-toolkit's `cipher_suites`) and the GnuTLS
// priority keywords it maps to. TLS 1.3 suites have no key exchange and, as in Go, cannot be
// configured: naming them is accepted and changes nothing.
struct CipherSuiteName {
  std::string_view go_name;
  std::string_view kx;      // "" for TLS 1.3 suites
  std::string_view cipher;  // GnuTLS cipher keyword
  std::string_view mac;     // GnuTLS MAC keyword ("AEAD" for GCM and ChaCha20)
};
const CipherSuiteName* FindCipherSuite(std::string_view go_name);

// A Go curve name (`curve_preferences`: CurveP256, CurveP384, CurveP521, X25519) to a GnuTLS
// group keyword (GROUP-SECP256R1, ...); "" when unknown.
std::string_view CurveGroup(std::string_view go_name);

struct TlsConfig {
  std::string cert_file;       // PEM certificate chain; required. Absolute after parsing.
  std::string key_file;        // PEM private key; required. Absolute after parsing.
  std::string client_ca_file;  // PEM CAs for client certificates; "" = none.
  ClientAuth client_auth = ClientAuth::kNoClientCert;  // default NoClientCert
  TlsVersion min_version = TlsVersion::kTls12;         // default TLS12 (as exporter-toolkit)
  TlsVersion max_version = TlsVersion::kTls13;         // default TLS13
  // Go names, in preference order; empty (default): GnuTLS's secure defaults without static-RSA
  // key exchange and CBC-SHA1 suites (kept when min_version is below TLS12, which needs them).
  std::vector<std::string> cipher_suites;
  // Go names, in preference order; empty (default): GnuTLS's groups.
  std::vector<std::string> curve_preferences;
};

struct WebConfig {
  std::optional<TlsConfig> tls;  // absent: plain HTTP
  // Extra response headers, in file order (http_server_config.headers).
  std::vector<std::pair<std::string, std::string>> headers;
  // user -> bcrypt hash; empty: no authentication.
  std::map<std::string, std::string> basic_auth_users;
  // Accepted but ignored settings, questionable combinations, one line each, for the caller to
  // log.
  std::vector<std::string> warnings;
};

// Parses the YAML text of a web-config file. `filename` names the file in errors and anchors
// relative paths (its directory).
Result<WebConfig> ParseWebConfig(std::string_view text, const std::string& filename);

// Reads and parses `path`; an unreadable file is an error naming it.
Result<WebConfig> LoadWebConfig(const std::string& path);

// The highest bcrypt cost accepted, as `htpasswd -B -C` (4..17). bcrypt allows 31, but each step
// doubles the time: cost 10 takes about 50 ms on one core, 17 about 6 s, 31 about four days.
inline constexpr int kMaxBcryptCost = 17;

// Checks the shape of a bcrypt hash: `$2a$`/`$2b$`/`$2y$`, two-digit cost 04..kMaxBcryptCost, 53
// characters of bcrypt base64 (60 in all). Returns a problem description, or "" when valid.
std::string BcryptHashProblem(std::string_view hash);

std::string_view ClientAuthName(ClientAuth auth);
std::string_view TlsVersionName(TlsVersion version);

}  // namespace gpuscope::http
