#include "http/web_config.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <set>

#include "base/config_file.h"
#include "base/text.h"

namespace gpuscope::http {
namespace {

constexpr std::pair<std::string_view, ClientAuth> kClientAuthNames[] = {
    {"NoClientCert", ClientAuth::kNoClientCert},
    {"RequestClientCert", ClientAuth::kRequestClientCert},
    {"RequireAnyClientCert", ClientAuth::kRequireAnyClientCert},
    {"VerifyClientCertIfGiven", ClientAuth::kVerifyClientCertIfGiven},
    {"RequireAndVerifyClientCert", ClientAuth::kRequireAndVerifyClientCert},
};

constexpr std::pair<std::string_view, TlsVersion> kTlsVersionNames[] = {
    {"TLS10", TlsVersion::kTls10},
    {"TLS11", TlsVersion::kTls11},
    {"TLS12", TlsVersion::kTls12},
    {"TLS13", TlsVersion::kTls13},
};

// Go's tls.CipherSuites() and tls.InsecureCipherSuites() names that GnuTLS 3.7 still offers
// (RC4 and 3DES are left out: GnuTLS refuses them and so do we).
constexpr CipherSuiteName kCipherSuites[] = {
    {"TLS_RSA_WITH_AES_128_CBC_SHA", "RSA", "AES-128-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_256_CBC_SHA", "RSA", "AES-256-CBC", "SHA1"},
    {"TLS_RSA_WITH_AES_128_CBC_SHA256", "RSA", "AES-128-CBC", "SHA256"},
    {"TLS_RSA_WITH_AES_128_GCM_SHA256", "RSA", "AES-128-GCM", "AEAD"},
    {"TLS_RSA_WITH_AES_256_GCM_SHA384", "RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "ECDHE-ECDSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA", "ECDHE-ECDSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "ECDHE-RSA", "AES-128-CBC", "SHA1"},
    {"TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA", "ECDHE-RSA", "AES-256-CBC", "SHA1"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256", "ECDHE-ECDSA", "AES-128-CBC", "SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256", "ECDHE-RSA", "AES-128-CBC", "SHA256"},
    {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "ECDHE-RSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "ECDHE-ECDSA", "AES-128-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384", "ECDHE-RSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384", "ECDHE-ECDSA", "AES-256-GCM", "AEAD"},
    {"TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-RSA", "CHACHA20-POLY1305", "AEAD"},
    {"TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "ECDHE-ECDSA", "CHACHA20-POLY1305", "AEAD"},
};

constexpr std::array<CipherSuiteName, 3> kTls13Suites = {{
    {"TLS_AES_128_GCM_SHA256", "", "AES-128-GCM", "AEAD"},
    {"TLS_AES_256_GCM_SHA384", "", "AES-256-GCM", "AEAD"},
    {"TLS_CHACHA20_POLY1305_SHA256", "", "CHACHA20-POLY1305", "AEAD"},
}};

constexpr std::array<std::pair<std::string_view, std::string_view>, 4> kCurves = {{
    {"CurveP256", "GROUP-SECP256R1"},
    {"CurveP384", "GROUP-SECP384R1"},
    {"CurveP521", "GROUP-SECP521R1"},
    {"X25519", "GROUP-X25519"},
}};

constexpr std::array<std::string_view, 9> kTlsKeys = {
    "cert_file",        "key_file",          "client_ca_file",
    "client_auth_type", "min_version",       "max_version",
    "cipher_suites",    "curve_preferences", "prefer_server_cipher_suites"};

// Headers the server itself owns; a config may not override them.
constexpr std::string_view kReservedHeaders[] = {
    "content-length", "content-type",     "content-encoding", "transfer-encoding",
    "connection",     "www-authenticate", "authorization",    "date"};

// Untrusted text in a message: short, escaped, quoted.
std::string Quote(std::string_view text) { return base::Concat({"\"", base::Excerpt(text), "\""}); }

// Carries the file name so every error says where it comes from.
class Parser {
 public:
  Parser(std::string filename) : filename_(std::move(filename)) {}

  Status Error(const YAML::Node& node, const std::string& problem) const {
    int line = node.Mark().is_null() ? 0 : node.Mark().line + 1;
    return Status::InvalidArgument(filename_ + ":" + std::to_string(line) + ": " + problem);
  }

  Status Error(int line, const std::string& problem) const {
    return Status::InvalidArgument(filename_ + ":" + std::to_string(line) + ": " + problem);
  }

  Result<std::string> Scalar(const YAML::Node& node, const std::string& key) const {
    if (!node.IsScalar()) return Error(node, key + ": expected a string");
    return node.Scalar();
  }

  Result<bool> Bool(const YAML::Node& node, const std::string& key) const {
    const std::string& text = node.IsScalar() ? node.Scalar() : "";
    if (text == "true") return true;
    if (text == "false") return false;
    return Error(node, key + ": expected true or false");
  }

  Status ExpectMap(const YAML::Node& node, const std::string& key) const {
    if (node.IsMap() || node.IsNull()) return Status::Ok();
    return Error(node, key + ": expected a mapping");
  }

  // Relative paths are relative to the config file, as in exporter-toolkit.
  std::string ResolvePath(const std::string& path) const {
    if (path.empty() || path.front() == '/') return path;
    std::filesystem::path dir = std::filesystem::path(filename_).parent_path();
    return (dir / path).lexically_normal().string();
  }

  Status ParseTls(const YAML::Node& node, WebConfig& config) const;
  Status ParseHttp(const YAML::Node& node, WebConfig& config) const;
  Status ParseUsers(const YAML::Node& node, WebConfig& config) const;

 private:
  Status ParseTlsKey(const YAML::Node& key_node, const YAML::Node& value, TlsConfig& tls) const;
  Status ParseVersion(const YAML::Node& value, const std::string& key, TlsVersion& out) const;
  Status ParseNames(const YAML::Node& value, const std::string& key,
                    std::vector<std::string>& out) const;

  std::string filename_;
};

Status Parser::ParseVersion(const YAML::Node& value, const std::string& key,
                            TlsVersion& out) const {
  Result<std::string> text = Scalar(value, key);
  if (!text.ok()) return text.status();
  for (const auto& [name, version] : kTlsVersionNames) {
    if (*text == name) {
      out = version;
      return Status::Ok();
    }
  }
  return Error(value,
               key + ": unknown TLS version " + Quote(*text) + " (TLS10, TLS11, TLS12, TLS13)");
}

// cipher_suites and curve_preferences: lists of Go names, each checked.
Status Parser::ParseNames(const YAML::Node& value, const std::string& key,
                          std::vector<std::string>& out) const {
  if (!value.IsSequence()) return Error(value, key + ": expected a list");
  out.clear();
  for (const YAML::Node& item : value) {
    Result<std::string> name = Scalar(item, key);
    if (!name.ok()) return name.status();
    bool known =
        key == "cipher_suites" ? FindCipherSuite(*name) != nullptr : !CurveGroup(*name).empty();
    if (!known) {
      std::string hint = key == "cipher_suites"
                             ? "a Go crypto/tls name such as TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"
                             : "CurveP256, CurveP384, CurveP521 or X25519";
      return Error(item,
                   key + ": unknown or unsupported \"" + *name + "\" (expected " + hint + ")");
    }
    out.push_back(*name);
  }
  return Status::Ok();
}

Status Parser::ParseTlsKey(const YAML::Node& key_node, const YAML::Node& value,
                           TlsConfig& tls) const {
  const std::string& key = key_node.Scalar();
  bool known = std::find(kTlsKeys.begin(), kTlsKeys.end(), key) != kTlsKeys.end();
  if (!known) return Error(key_node, "tls_server_config: unknown key " + Quote(key));
  if (value.IsNull()) return Status::Ok();  // `key:` with no value keeps the default
  if (key == "cert_file" || key == "key_file" || key == "client_ca_file") {
    Result<std::string> text = Scalar(value, key);
    if (!text.ok()) return text.status();
    std::string& field = key == "cert_file"  ? tls.cert_file
                         : key == "key_file" ? tls.key_file
                                             : tls.client_ca_file;
    field = ResolvePath(*text);
    return Status::Ok();
  }
  if (key == "client_auth_type") {
    Result<std::string> text = Scalar(value, key);
    if (!text.ok()) return text.status();
    for (const auto& [name, auth] : kClientAuthNames) {
      if (*text == name) {
        tls.client_auth = auth;
        return Status::Ok();
      }
    }
    return Error(value, "client_auth_type: unknown value " + Quote(*text) +
                            " (NoClientCert, RequestClientCert, RequireAnyClientCert, "
                            "VerifyClientCertIfGiven, RequireAndVerifyClientCert)");
  }
  if (key == "min_version") return ParseVersion(value, key, tls.min_version);
  if (key == "max_version") return ParseVersion(value, key, tls.max_version);
  if (key == "cipher_suites") return ParseNames(value, key, tls.cipher_suites);
  if (key == "curve_preferences") return ParseNames(value, key, tls.curve_preferences);
  return Bool(value, key).status();  // prefer_server_cipher_suites: no effect in TLS 1.3
}

Status Parser::ParseTls(const YAML::Node& node, WebConfig& config) const {
  GPUSCOPE_RETURN_IF_ERROR(ExpectMap(node, "tls_server_config"));
  TlsConfig tls;
  for (const auto& entry : node) {
    GPUSCOPE_RETURN_IF_ERROR(ParseTlsKey(entry.first, entry.second, tls));
  }
  bool any = !tls.cert_file.empty() || !tls.key_file.empty() || !tls.client_ca_file.empty() ||
             tls.client_auth != ClientAuth::kNoClientCert;
  if (!any) return Status::Ok();  // an empty section means plain HTTP, as in exporter-toolkit
  if (tls.cert_file.empty()) return Error(node, "tls_server_config: missing cert_file");
  if (tls.key_file.empty()) return Error(node, "tls_server_config: missing key_file");
  bool verifies = tls.client_auth == ClientAuth::kVerifyClientCertIfGiven ||
                  tls.client_auth == ClientAuth::kRequireAndVerifyClientCert;
  if (verifies && tls.client_ca_file.empty()) {
    return Error(node, "tls_server_config: client_auth_type " +
                           std::string(ClientAuthName(tls.client_auth)) + " needs client_ca_file");
  }
  if (tls.min_version > tls.max_version) {
    return Error(node, "tls_server_config: min_version is above max_version");
  }
  config.tls = tls;
  return Status::Ok();
}

bool IsToken(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
    if (!ok) return false;
  }
  return true;
}

Status Parser::ParseHttp(const YAML::Node& node, WebConfig& config) const {
  GPUSCOPE_RETURN_IF_ERROR(ExpectMap(node, "http_server_config"));
  for (const auto& entry : node) {
    std::string key = entry.first.Scalar();
    if (key == "http2") {
      if (!entry.second.IsNull()) GPUSCOPE_RETURN_IF_ERROR(Bool(entry.second, key).status());
      continue;  // HTTP/1.1 only; Prometheus scrapes over HTTP/1.1 by default
    }
    if (key != "headers") {
      return Error(entry.first, "http_server_config: unknown key " + Quote(key));
    }
    GPUSCOPE_RETURN_IF_ERROR(ExpectMap(entry.second, "headers"));
    for (const auto& header : entry.second) {
      std::string name = header.first.Scalar();
      if (!IsToken(name)) return Error(header.first, "headers: invalid header name " + Quote(name));
      for (std::string_view reserved : kReservedHeaders) {
        if (base::EqualsIgnoreCase(name, reserved)) {
          return Error(header.first, "headers: " + name + " is set by the server");
        }
      }
      Result<std::string> value = Scalar(header.second, name);
      if (!value.ok()) return value.status();
      if (value->find_first_of("\r\n") != std::string::npos) {
        return Error(header.second, "headers: value of " + name + " has a line break");
      }
      config.headers.emplace_back(name, *value);
    }
  }
  return Status::Ok();
}

Status Parser::ParseUsers(const YAML::Node& node, WebConfig& config) const {
  GPUSCOPE_RETURN_IF_ERROR(ExpectMap(node, "basic_auth_users"));
  for (const auto& entry : node) {
    std::string user = entry.first.Scalar();
    if (user.empty() || user.find(':') != std::string::npos) {
      return Error(entry.first, "basic_auth_users: invalid user name " + Quote(user));
    }
    Result<std::string> hash = Scalar(entry.second, "basic_auth_users." + base::Excerpt(user));
    if (!hash.ok()) return hash.status();
    std::string problem = BcryptHashProblem(*hash);
    if (!problem.empty()) {
      return Error(entry.second, "basic_auth_users: user " + Quote(user) + ": " + problem);
    }
    config.basic_auth_users[user] = *hash;
  }
  std::set<std::string> costs;
  for (const auto& [user, hash] : config.basic_auth_users) costs.insert(hash.substr(4, 2));
  if (costs.size() > 1) {
    config.warnings.push_back(filename_ + ":" + std::to_string(node.Mark().line + 1) +
                              ": basic_auth_users: hashes have different bcrypt costs (" +
                              *costs.begin() + " to " + *costs.rbegin() +
                              "); the time a login takes then tells which user names exist");
  }
  return Status::Ok();
}

Result<WebConfig> ParseRoot(const Parser& parser, const YAML::Node& root) {
  WebConfig config;
  // Fail closed: a file that says nothing would serve plain HTTP without auth.
  if (root.IsNull()) return parser.Error(1, "has no settings (a web-config must not be empty)");
  if (!root.IsMap()) return parser.Error(root, "expected a mapping at the top level");
  for (const auto& entry : root) {
    std::string key = entry.first.Scalar();
    Status status;
    if (key == "tls_server_config") {
      status = parser.ParseTls(entry.second, config);
    } else if (key == "http_server_config") {
      status = parser.ParseHttp(entry.second, config);
    } else if (key == "basic_auth_users") {
      status = parser.ParseUsers(entry.second, config);
    } else {
      status = parser.Error(entry.first, "unknown key " + Quote(key));
    }
    GPUSCOPE_RETURN_IF_ERROR(status);
  }
  return config;
}

}  // namespace

Result<WebConfig> ParseWebConfig(std::string_view text, const std::string& filename) {
  Parser parser(filename);
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return ParseRoot(parser, root);
  } catch (const YAML::Exception& e) {
    return parser.Error(e.mark.is_null() ? 0 : e.mark.line + 1, e.msg);
  } catch (const std::exception& e) {
    return parser.Error(0, e.what());
  }
}

Result<WebConfig> LoadWebConfig(const std::string& path) {
  Result<std::string> text = base::ReadConfigFile(path, "web-config file");
  if (!text.ok()) return text.status();
  return ParseWebConfig(*text, path);
}

std::string BcryptHashProblem(std::string_view hash) {
  if (hash.size() < 7 || hash[0] != '$' || hash[1] != '2' ||
      std::string_view("aby").find(hash[2]) == std::string_view::npos || hash[3] != '$') {
    return "not a bcrypt hash (expected $2a$, $2b$ or $2y$)";
  }
  if (hash[4] < '0' || hash[4] > '9' || hash[5] < '0' || hash[5] > '9' || hash[6] != '$') {
    return "bcrypt hash has no two-digit cost";
  }
  int cost = (hash[4] - '0') * 10 + (hash[5] - '0');
  if (cost < 4 || cost > kMaxBcryptCost) {
    return "bcrypt cost " + std::to_string(cost) + " is not in 04.." +
           std::to_string(kMaxBcryptCost) +
           " (each step doubles the time of a check; 10 to 12 is usual)";
  }
  if (hash.size() != 60) {
    return "bcrypt hash has " + std::to_string(hash.size()) + " characters, expected 60";
  }
  for (char c : hash.substr(7)) {
    bool ok = c == '.' || c == '/' || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
              (c >= '0' && c <= '9');
    if (!ok) return "bcrypt hash has a character outside its alphabet";
  }
  return "";
}

const CipherSuiteName* FindCipherSuite(std::string_view go_name) {
  for (const CipherSuiteName& suite : kCipherSuites) {
    if (suite.go_name == go_name) return &suite;
  }
  for (const CipherSuiteName& suite : kTls13Suites) {
    if (suite.go_name == go_name) return &suite;
  }
  return nullptr;
}

std::string_view CurveGroup(std::string_view go_name) {
  for (const auto& [name, group] : kCurves) {
    if (name == go_name) return group;
  }
  return "";
}

std::string_view ClientAuthName(ClientAuth auth) {
  for (const auto& [name, value] : kClientAuthNames) {
    if (value == auth) return name;
  }
  return "?";
}

std::string_view TlsVersionName(TlsVersion version) {
  for (const auto& [name, value] : kTlsVersionNames) {
    if (value == version) return name;
  }
  return "?";
}

}  // namespace gpuscope::http
