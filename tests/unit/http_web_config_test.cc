#include <gtest/gtest.h>

#include "http/web_config.h"
#include "http_test_util.h"

namespace gpuscope::http {
namespace {

using ::gpuscope::http::testing::TempDir;

constexpr char kGoodHash[] = "$2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi";

TEST(WebConfig, ParsesAFullFile) {
  std::string text = std::string(R"(
tls_server_config:
  cert_file: certs/server.crt
  key_file: /etc/gpuscope/server.key
  client_ca_file: ca.pem
  client_auth_type: RequireAndVerifyClientCert
  min_version: TLS13
  cipher_suites: [TLS_AES_128_GCM_SHA256, TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256]
  curve_preferences: [X25519, CurveP384]
http_server_config:
  headers:
    X-Frame-Options: deny
    Strict-Transport-Security: max-age=31536000
basic_auth_users:
  prometheus: )") + kGoodHash +
                     "\n";
  Result<WebConfig> config = ParseWebConfig(text, "/etc/gpuscope/web.yml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_TRUE(config->tls.has_value());
  EXPECT_EQ(config->tls->cert_file, "/etc/gpuscope/certs/server.crt");
  EXPECT_EQ(config->tls->key_file, "/etc/gpuscope/server.key");
  EXPECT_EQ(config->tls->client_ca_file, "/etc/gpuscope/ca.pem");
  EXPECT_EQ(config->tls->client_auth, ClientAuth::kRequireAndVerifyClientCert);
  EXPECT_EQ(config->tls->min_version, TlsVersion::kTls13);
  EXPECT_EQ(config->tls->max_version, TlsVersion::kTls13);
  ASSERT_EQ(config->headers.size(), 2u);
  EXPECT_EQ(config->headers[0].first, "X-Frame-Options");
  EXPECT_EQ(config->headers[1].second, "max-age=31536000");
  EXPECT_EQ(config->basic_auth_users.at("prometheus"), kGoodHash);
  EXPECT_EQ(config->tls->cipher_suites,
            (std::vector<std::string>{"TLS_AES_128_GCM_SHA256",
                                      "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256"}));
  EXPECT_EQ(config->tls->curve_preferences, (std::vector<std::string>{"X25519", "CurveP384"}));
  EXPECT_TRUE(config->warnings.empty());
}

TEST(WebConfig, UnknownCipherSuitesAndCurvesAreErrors) {
  Result<WebConfig> rc4 = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n"
      "  cipher_suites:\n    - TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256\n"
      "    - TLS_RSA_WITH_RC4_128_SHA\n",
      "w.yml");
  ASSERT_FALSE(rc4.ok());
  EXPECT_NE(rc4.status().message().find("w.yml:6: cipher_suites: unknown or unsupported "
                                        "\"TLS_RSA_WITH_RC4_128_SHA\""),
            std::string::npos)
      << rc4.status().message();
  Result<WebConfig> curve = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  curve_preferences: [P256]\n", "w.yml");
  ASSERT_FALSE(curve.ok());
  EXPECT_NE(curve.status().message().find("w.yml:4: curve_preferences"), std::string::npos);
  Result<WebConfig> scalar = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  cipher_suites: TLS_X\n", "w.yml");
  EXPECT_FALSE(scalar.ok());
}

TEST(WebConfig, MixedBcryptCostsAreWarnedAbout) {
  std::string hash = kGoodHash;  // cost 10
  Result<WebConfig> config = ParseWebConfig(
      "basic_auth_users:\n  a: " + hash + "\n  b: $2y$12" + hash.substr(6) + "\n", "w.yml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  ASSERT_EQ(config->warnings.size(), 1u);
  EXPECT_NE(config->warnings[0].find("different bcrypt costs (10 to 12)"), std::string::npos)
      << config->warnings[0];
}

TEST(WebConfig, EmptyFileFailsClosedAndEmptyTlsMeansPlainHttp) {
  for (const char* text : {"", "\n", "# only a comment\n", "---\n"}) {
    Result<WebConfig> empty = ParseWebConfig(text, "web.yml");
    ASSERT_FALSE(empty.ok()) << text;
    EXPECT_NE(empty.status().message().find("web.yml:1: has no settings"), std::string::npos)
        << empty.status().message();
  }
  Result<WebConfig> blank = ParseWebConfig("tls_server_config:\n", "web.yml");
  ASSERT_TRUE(blank.ok()) << blank.status().message();
  EXPECT_FALSE(blank->tls.has_value());
  EXPECT_TRUE(blank->basic_auth_users.empty());
}

TEST(WebConfig, DefaultsTls12To13AndNoClientCert) {
  Result<WebConfig> config =
      ParseWebConfig("tls_server_config:\n  cert_file: a.crt\n  key_file: a.key\n", "dir/web.yml");
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->tls->cert_file, "dir/a.crt");
  EXPECT_EQ(config->tls->min_version, TlsVersion::kTls12);
  EXPECT_EQ(config->tls->max_version, TlsVersion::kTls13);
  EXPECT_EQ(config->tls->client_auth, ClientAuth::kNoClientCert);
}

TEST(WebConfig, UnknownKeysAreRejectedWithTheirLine) {
  Result<WebConfig> top = ParseWebConfig("basic_auth_users: {}\ntls_config:\n  x: 1\n", "w.yml");
  ASSERT_FALSE(top.ok());
  EXPECT_EQ(top.status().message(), "w.yml:2: unknown key \"tls_config\"");
  Result<WebConfig> nested = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  cert_fiel: c\n", "w.yml");
  ASSERT_FALSE(nested.ok());
  EXPECT_EQ(nested.status().message(), "w.yml:4: tls_server_config: unknown key \"cert_fiel\"");
  Result<WebConfig> http = ParseWebConfig("http_server_config:\n  header: {}\n", "w.yml");
  ASSERT_FALSE(http.ok());
  EXPECT_EQ(http.status().message(), "w.yml:2: http_server_config: unknown key \"header\"");
}

TEST(WebConfig, BadBcryptHashNamesUserAndLine) {
  Result<WebConfig> config = ParseWebConfig(
      std::string("basic_auth_users:\n  alice: ") + kGoodHash + "\n  bob: plaintext\n", "w.yml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "w.yml:3: basic_auth_users: user \"bob\": not a bcrypt hash (expected $2a$, $2b$ or "
            "$2y$)");
  Result<WebConfig> truncated = ParseWebConfig(
      std::string("basic_auth_users:\n  carol: ") + std::string(kGoodHash).substr(0, 50) + "\n",
      "w.yml");
  ASSERT_FALSE(truncated.ok());
  EXPECT_NE(truncated.status().message().find("w.yml:2:"), std::string::npos);
  EXPECT_NE(truncated.status().message().find("\"carol\""), std::string::npos);
  EXPECT_NE(truncated.status().message().find("50 characters"), std::string::npos);
}

TEST(WebConfig, BcryptHashShapes) {
  EXPECT_EQ(BcryptHashProblem(kGoodHash), "");
  std::string hash = kGoodHash;
  EXPECT_EQ(BcryptHashProblem("$2a" + hash.substr(3)), "");
  EXPECT_EQ(BcryptHashProblem("$2b" + hash.substr(3)), "");
  EXPECT_NE(BcryptHashProblem("$2x" + hash.substr(3)), "");
  EXPECT_NE(BcryptHashProblem("$2y$03" + hash.substr(6)), "");  // cost below 4
  EXPECT_EQ(BcryptHashProblem("$2y$17" + hash.substr(6)), "");
  std::string absurd = BcryptHashProblem("$2y$31" + hash.substr(6));  // days per check
  EXPECT_NE(absurd.find("cost 31 is not in 04..17"), std::string::npos) << absurd;
  EXPECT_NE(BcryptHashProblem("$2y$18" + hash.substr(6)), "");
  EXPECT_NE(BcryptHashProblem("$2y$1x" + hash.substr(6)), "");
  EXPECT_NE(BcryptHashProblem(hash.substr(0, 59) + "!"), "");
  EXPECT_NE(BcryptHashProblem(hash + "a"), "");
}

TEST(WebConfig, BadClientAuthTypeAndVersions) {
  Result<WebConfig> auth = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: RequireCert\n",
      "w.yml");
  ASSERT_FALSE(auth.ok());
  EXPECT_NE(
      auth.status().message().find("w.yml:4: client_auth_type: unknown value \"RequireCert\""),
      std::string::npos);
  Result<WebConfig> version = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n", "w.yml");
  ASSERT_FALSE(version.ok());
  EXPECT_NE(version.status().message().find("w.yml:4: min_version"), std::string::npos);
  Result<WebConfig> order = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n"
      "  max_version: TLS12\n",
      "w.yml");
  EXPECT_FALSE(order.ok());
}

TEST(WebConfig, VerificationNeedsCaAndCertNeedsKey) {
  Result<WebConfig> no_ca = ParseWebConfig(
      "tls_server_config:\n  cert_file: a\n  key_file: b\n"
      "  client_auth_type: RequireAndVerifyClientCert\n",
      "w.yml");
  ASSERT_FALSE(no_ca.ok());
  EXPECT_NE(no_ca.status().message().find("needs client_ca_file"), std::string::npos);
  Result<WebConfig> no_key = ParseWebConfig("tls_server_config:\n  cert_file: a\n", "w.yml");
  ASSERT_FALSE(no_key.ok());
  EXPECT_NE(no_key.status().message().find("missing key_file"), std::string::npos);
}

TEST(WebConfig, RejectsServerOwnedHeadersAndBadYaml) {
  Result<WebConfig> header =
      ParseWebConfig("http_server_config:\n  headers:\n    Content-Type: x\n", "w.yml");
  ASSERT_FALSE(header.ok());
  EXPECT_NE(header.status().message().find("w.yml:3:"), std::string::npos);
  Result<WebConfig> yaml = ParseWebConfig("basic_auth_users: [\n", "w.yml");
  ASSERT_FALSE(yaml.ok());
  EXPECT_EQ(yaml.status().message().rfind("w.yml:", 0), 0u);
  Result<WebConfig> list = ParseWebConfig("- a\n- b\n", "w.yml");
  EXPECT_FALSE(list.ok());
}

TEST(WebConfig, LoaderNamesAMissingFile) {
  Result<WebConfig> config = LoadWebConfig("/nonexistent/gpuscope/web.yml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().code(), Status::Code::kNotFound);
  EXPECT_NE(config.status().message().find("/nonexistent/gpuscope/web.yml"), std::string::npos);
}

TEST(WebConfig, LoaderResolvesPathsAgainstTheFile) {
  TempDir dir;
  std::string path =
      dir.Write("web.yml", "tls_server_config:\n  cert_file: c.pem\n  key_file: k\n");
  Result<WebConfig> config = LoadWebConfig(path);
  ASSERT_TRUE(config.ok()) << config.status().message();
  EXPECT_EQ(config->tls->cert_file, dir.File("c.pem"));
}

}  // namespace
}  // namespace gpuscope::http
