// TLS, client certificates and certificate reload, checked with curl against certificates that
// openssl makes for each test.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "http/server.h"
#include "http/tls.h"
#include "http_test_util.h"

namespace gpuscope::http {
namespace {

using ::gpuscope::http::testing::Curl;
using ::gpuscope::http::testing::CurlResult;
using ::gpuscope::http::testing::Shell;
using ::gpuscope::http::testing::TempDir;

constexpr char kKeyOpts[] = "-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes";

class TlsTest : public ::testing::Test {
 protected:
  // Self-signed server certificate for 127.0.0.1 in <name>.crt / <name>.key.
  void MakeServerCert(const std::string& name, const std::string& cn) {
    Run("openssl req -x509 " + std::string(kKeyOpts) + " -days 2 -subj /CN=" + cn +
        " -addext subjectAltName=IP:127.0.0.1 -keyout " + dir_.File(name + ".key") + " -out " +
        dir_.File(name + ".crt"));
  }

  // A CA and a client certificate it signs: <ca>.crt/.key, <client>.crt/.key.
  void MakeCa(const std::string& ca) {
    Run("openssl req -x509 " + std::string(kKeyOpts) + " -days 2 -subj /CN=" + ca + " -keyout " +
        dir_.File(ca + ".key") + " -out " + dir_.File(ca + ".crt"));
  }
  // `extensions`: x509v3 lines for the client certificate, e.g. "extendedKeyUsage=serverAuth".
  void MakeClientCert(const std::string& client, const std::string& ca,
                      const std::string& extensions = "") {
    Run("openssl req " + std::string(kKeyOpts) + " -subj /CN=" + client + " -keyout " +
        dir_.File(client + ".key") + " -out " + dir_.File(client + ".csr"));
    std::string ext =
        extensions.empty() ? "" : " -extfile " + dir_.Write(client + ".ext", extensions + "\n");
    Run("openssl x509 -req -days 2 -in " + dir_.File(client + ".csr") + " -CA " +
        dir_.File(ca + ".crt") + " -CAkey " + dir_.File(ca + ".key") + " -CAcreateserial -out " +
        dir_.File(client + ".crt") + ext);
  }

  void Run(const std::string& command) {
    int status = -1;
    Shell(command + " >/dev/null 2>&1", &status);
    ASSERT_EQ(status, 0) << command;
  }

  std::unique_ptr<Server> StartServer(const std::string& web_config,
                                      ServerOptions options = ServerOptions()) {
    options.listen_address = "127.0.0.1:0";
    options.web_config_file = dir_.Write("web.yml", web_config);
    options.cert_check_interval = std::chrono::milliseconds(100);
    auto server = std::make_unique<Server>(options);
    server->Handle("/metrics", [](const Request&) { return Response::Text(200, "gpu 1\n"); });
    Status status = server->Start();
    EXPECT_TRUE(status.ok()) << status.message();
    return server;
  }

  std::string Url(const Server& server) {
    return "https://127.0.0.1:" + std::to_string(server.port()) + "/metrics";
  }

  std::string TrustServer(const std::string& name) {
    return "--cacert " + dir_.File(name + ".crt") + " ";
  }
  std::string ClientCert(const std::string& client) {
    return "--cert " + dir_.File(client + ".crt") + " --key " + dir_.File(client + ".key") + " ";
  }

  TempDir dir_;
};

TEST_F(TlsTest, ServesHttpsWithTheConfiguredCertificate) {
  MakeServerCert("server", "gpuscope-test");
  auto server =
      StartServer("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  EXPECT_TRUE(server->tls_enabled());
  EXPECT_TRUE(testing::MapsGnuTls());  // loaded for TLS only
  CurlResult result = Curl(dir_, TrustServer("server") + Url(*server));
  EXPECT_EQ(result.code, 200);
  EXPECT_EQ(result.body, "gpu 1\n");
  // Plain HTTP to a TLS port gets no HTTP answer.
  std::string plain = "http://127.0.0.1:" + std::to_string(server->port()) + "/metrics";
  EXPECT_NE(Curl(dir_, plain).code, 200);
  // A client that does not trust the certificate fails.
  EXPECT_EQ(Curl(dir_, Url(*server)).code, 0);
}

TEST_F(TlsTest, MinVersionIsEnforced) {
  MakeServerCert("server", "gpuscope-test");
  auto server = StartServer(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  min_version: TLS13\n");
  EXPECT_EQ(Curl(dir_, TrustServer("server") + "--tls-max 1.2 " + Url(*server)).code, 0);
  EXPECT_EQ(Curl(dir_, TrustServer("server") + "--tlsv1.3 " + Url(*server)).code, 200);
}

TEST_F(TlsTest, RequireAndVerifyClientCert) {
  MakeServerCert("server", "gpuscope-test");
  MakeCa("ca");
  MakeClientCert("client", "ca");
  MakeCa("rogue-ca");
  MakeClientCert("rogue", "rogue-ca");
  auto server = StartServer(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n");
  EXPECT_NE(Curl(dir_, TrustServer("server") + Url(*server)).code, 200);
  EXPECT_NE(Curl(dir_, TrustServer("server") + ClientCert("rogue") + Url(*server)).code, 200);
  CurlResult ok = Curl(dir_, TrustServer("server") + ClientCert("client") + Url(*server));
  EXPECT_EQ(ok.code, 200);
  EXPECT_EQ(ok.body, "gpu 1\n");
}

TEST_F(TlsTest, ClientCertificateMustAllowClientAuth) {
  MakeServerCert("server", "gpuscope-test");
  MakeCa("ca");
  MakeClientCert("server-only", "ca", "extendedKeyUsage=serverAuth");
  MakeClientCert("client-eku", "ca", "extendedKeyUsage=serverAuth,clientAuth");
  MakeClientCert("no-eku", "ca");
  auto server = StartServer(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n");
  EXPECT_NE(Curl(dir_, TrustServer("server") + ClientCert("server-only") + Url(*server)).code, 200);
  EXPECT_EQ(Curl(dir_, TrustServer("server") + ClientCert("client-eku") + Url(*server)).code, 200);
  EXPECT_EQ(Curl(dir_, TrustServer("server") + ClientCert("no-eku") + Url(*server)).code, 200);
}

TEST_F(TlsTest, DefaultRefusesStaticRsaAndCbcSha1) {
  MakeServerCert("server", "gpuscope-test");  // ECDSA
  Run("openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=rsa -addext "
      "subjectAltName=IP:127.0.0.1 -keyout " +
      dir_.File("rsa.key") + " -out " + dir_.File("rsa.crt"));
  auto ec = StartServer("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  std::string tls12 = TrustServer("server") + "--tls-max 1.2 ";
  EXPECT_EQ(Curl(dir_, tls12 + "--ciphers ECDHE-ECDSA-AES128-GCM-SHA256 " + Url(*ec)).code, 200);
  EXPECT_EQ(Curl(dir_, tls12 + "--ciphers ECDHE-ECDSA-AES128-SHA " + Url(*ec)).code, 0);
  auto rsa = StartServer("tls_server_config:\n  cert_file: rsa.crt\n  key_file: rsa.key\n");
  std::string rsa12 = TrustServer("rsa") + "--tls-max 1.2 ";
  EXPECT_EQ(Curl(dir_, rsa12 + "--ciphers ECDHE-RSA-AES128-GCM-SHA256 " + Url(*rsa)).code, 200);
  EXPECT_EQ(Curl(dir_, rsa12 + "--ciphers AES128-GCM-SHA256 " + Url(*rsa)).code, 0);  // static RSA
  EXPECT_EQ(Curl(dir_, rsa12 + "--ciphers ECDHE-RSA-AES128-SHA " + Url(*rsa)).code, 0);
}

TEST_F(TlsTest, CipherSuitesAndCurvesAreHonoured) {
  MakeServerCert("server", "gpuscope-test");
  auto server = StartServer(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  cipher_suites: [TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\n"
      "  curve_preferences: [CurveP384]\n");
  std::string tls12 = TrustServer("server") + "--tls-max 1.2 ";
  EXPECT_EQ(Curl(dir_, tls12 + "--ciphers ECDHE-ECDSA-AES256-GCM-SHA384 " + Url(*server)).code,
            200);
  EXPECT_EQ(Curl(dir_, tls12 + "--ciphers ECDHE-ECDSA-AES128-GCM-SHA256 " + Url(*server)).code, 0);
  // In TLS 1.2 the client's curves also cover the certificate's own (P-256).
  EXPECT_EQ(Curl(dir_, tls12 + "--curves P-384:P-256 " + Url(*server)).code, 200);
  EXPECT_EQ(Curl(dir_, tls12 + "--curves X25519:P-256 " + Url(*server)).code, 0);
  // TLS 1.3 uses the listed AEAD cipher; the curves apply to it too.
  EXPECT_EQ(Curl(dir_, TrustServer("server") + "--tlsv1.3 " + Url(*server)).code, 200);
  EXPECT_EQ(Curl(dir_, TrustServer("server") + "--tlsv1.3 --curves X25519 " + Url(*server)).code,
            0);
}

TEST_F(TlsTest, OldVersionsGetAProtocolVersionAlert) {
  MakeServerCert("server", "gpuscope-test");
  auto server =
      StartServer("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  for (const char* flag : {"-tls1", "-tls1_1"}) {
    // SECLEVEL=0 lets OpenSSL 3 offer TLS 1.0 and 1.1 at all.
    std::string out =
        Shell("openssl s_client -connect 127.0.0.1:" + std::to_string(server->port()) + " " + flag +
              " -cipher DEFAULT@SECLEVEL=0 </dev/null 2>&1");
    EXPECT_NE(out.find("alert protocol version"), std::string::npos) << flag << ": " << out;
  }
}

TEST_F(TlsTest, StalledHandshakeIsCutAtTheHeadDeadline) {
  MakeServerCert("server", "gpuscope-test");
  ServerOptions options;
  options.head_timeout = std::chrono::milliseconds(500);
  auto server =
      StartServer("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n", options);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(server->port());
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  timeval timeout{5, 0};  // the idle timeout (10 s) cannot be what closes it
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  ASSERT_EQ(send(fd, "\x16\x03\x01", 3, MSG_NOSIGNAL), 3);  // the start of a TLS record
  char buffer[64];
  ssize_t n = recv(fd, buffer, sizeof(buffer), 0);
  bool closed = n == 0 || (n < 0 && errno == ECONNRESET);
  close(fd);
  EXPECT_TRUE(closed) << "recv returned " << n;
  EXPECT_EQ(server->heads_expired(), 1u);
  EXPECT_EQ(Curl(dir_, TrustServer("server") + Url(*server)).code, 200);
}

TEST(TlsPriorities, MapsExporterToolkitSettings) {
  TlsConfig config;
  EXPECT_EQ(TlsPriorities(config), "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:-RSA:-SHA1");
  config.min_version = TlsVersion::kTls10;
  EXPECT_EQ(TlsPriorities(config),
            "NORMAL:-VERS-ALL:+VERS-TLS1.0:+VERS-TLS1.1:+VERS-TLS1.2:+VERS-TLS1.3");
  config.min_version = TlsVersion::kTls12;
  config.max_version = TlsVersion::kTls12;
  config.cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
                          "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_AES_128_GCM_SHA256"};
  config.curve_preferences = {"X25519", "CurveP256"};
  EXPECT_EQ(TlsPriorities(config),
            "NORMAL:-VERS-ALL:+VERS-TLS1.2:-KX-ALL:-CIPHER-ALL:-MAC-ALL:+ECDHE-RSA:+ECDHE-ECDSA:"
            "+AES-128-GCM:+AEAD:-GROUP-ALL:+GROUP-X25519:+GROUP-SECP256R1");
  // CBC suites alone leave TLS 1.3 its own AEAD ciphers.
  TlsConfig cbc;
  cbc.cipher_suites = {"TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA"};
  EXPECT_EQ(TlsPriorities(cbc),
            "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:-KX-ALL:-CIPHER-ALL:-MAC-ALL:+ECDHE-RSA:"
            "+AES-128-CBC:+AES-256-GCM:+CHACHA20-POLY1305:+AES-128-GCM:+SHA1:+AEAD");
}

TEST_F(TlsTest, VerifyClientCertIfGivenAllowsNone) {
  MakeServerCert("server", "gpuscope-test");
  MakeCa("ca");
  MakeClientCert("client", "ca");
  MakeCa("rogue-ca");
  MakeClientCert("rogue", "rogue-ca");
  auto server = StartServer(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  client_ca_file: ca.crt\n  client_auth_type: VerifyClientCertIfGiven\n");
  EXPECT_EQ(Curl(dir_, TrustServer("server") + Url(*server)).code, 200);
  EXPECT_EQ(Curl(dir_, TrustServer("server") + ClientCert("client") + Url(*server)).code, 200);
  EXPECT_NE(Curl(dir_, TrustServer("server") + ClientCert("rogue") + Url(*server)).code, 200);
}

TEST_F(TlsTest, RequireAnyClientCertAcceptsAnyCertificate) {
  MakeServerCert("server", "gpuscope-test");
  MakeCa("rogue-ca");
  MakeClientCert("rogue", "rogue-ca");
  auto server = StartServer(
      "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
      "  client_auth_type: RequireAnyClientCert\n");
  EXPECT_NE(Curl(dir_, TrustServer("server") + Url(*server)).code, 200);
  EXPECT_EQ(Curl(dir_, TrustServer("server") + ClientCert("rogue") + Url(*server)).code, 200);
}

TEST_F(TlsTest, ReloadsReplacedCertificateFiles) {
  MakeServerCert("server", "first");
  auto server =
      StartServer("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  Run("cp " + dir_.File("server.crt") + " " + dir_.File("first.crt"));
  EXPECT_EQ(Curl(dir_, "--cacert " + dir_.File("first.crt") + " " + Url(*server)).code, 200);
  uint64_t starts = server->reload_count();

  MakeServerCert("server", "second");  // rewrites server.crt and server.key in place
  int code = 0;
  for (int i = 0; i < 50 && code != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    code = Curl(dir_, TrustServer("server") + Url(*server)).code;
  }
  EXPECT_EQ(code, 200);
  EXPECT_GT(server->reload_count(), starts);
  EXPECT_EQ(Curl(dir_, "--cacert " + dir_.File("first.crt") + " " + Url(*server)).code, 0);

  // A broken replacement keeps the working certificate.
  dir_.Write("server.crt", "-----BEGIN CERTIFICATE-----\nbroken\n");
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(Curl(dir_, TrustServer("server") + Url(*server)).code, 0);  // CA file now broken too
  Status reload = server->Reload();
  EXPECT_FALSE(reload.ok());
  EXPECT_NE(reload.message().find("server.crt"), std::string::npos) << reload.message();
}

TEST_F(TlsTest, ExplicitReloadSwitchesPlainToTls) {
  MakeServerCert("server", "gpuscope-test");
  auto server = StartServer("tls_server_config:\n");  // plain HTTP (an empty file is refused)
  std::string plain = "http://127.0.0.1:" + std::to_string(server->port()) + "/metrics";
  EXPECT_EQ(Curl(dir_, plain).code, 200);
  dir_.Write("web.yml", "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n");
  Status status = server->Reload();
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(server->tls_enabled());
  EXPECT_EQ(Curl(dir_, TrustServer("server") + Url(*server)).code, 200);
}

size_t OpenFds() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) {
    ++count;
  }
  return count;
}

TEST_F(TlsTest, ScrapesKeepWorkingWhileTlsRestartsAndNothingLeaks) {
  MakeServerCert("server", "gpuscope-test");
  std::string base = "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";
  size_t fds_before = OpenFds();
  {
    auto server = StartServer(base);
    std::atomic<bool> done = false;
    std::atomic<int> failures = 0, successes = 0;
    std::thread scraper([&] {
      while (!done) {
        int code = Curl(dir_, TrustServer("server") + Url(*server)).code;
        (code == 200 ? successes : failures)++;
      }
    });
    uint64_t starts = server->reload_count();
    for (int i = 0; i < 8; ++i) {
      // Alternating client_auth_type changes the TLS settings: each reload restarts the daemon.
      dir_.Write("web.yml", base + (i % 2 == 0 ? "  client_auth_type: RequestClientCert\n" : ""));
      ASSERT_TRUE(server->Reload().ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    done = true;
    scraper.join();
    EXPECT_EQ(server->reload_count(), starts + 8);
    EXPECT_EQ(failures, 0);
    EXPECT_GT(successes, 0);
  }
  EXPECT_EQ(OpenFds(), fds_before);
}

TEST(TlsMaterial, RejectsAMismatchedKeyAndMissingFiles) {
  TempDir dir;
  for (std::string name : {"a", "b"}) {
    int status = -1;
    Shell("openssl req -x509 " + std::string(kKeyOpts) + " -days 1 -subj /CN=x -keyout " +
              dir.File(name + ".key") + " -out " + dir.File(name + ".crt") + " >/dev/null 2>&1",
          &status);
    ASSERT_EQ(status, 0);
  }
  TlsConfig config;
  config.cert_file = dir.File("a.crt");
  config.key_file = dir.File("b.key");
  Result<TlsMaterial> mismatched = LoadTlsMaterial(config);
  ASSERT_FALSE(mismatched.ok());
  EXPECT_NE(mismatched.status().message().find("a.crt"), std::string::npos);
  config.key_file = dir.File("missing.key");
  Result<TlsMaterial> missing = LoadTlsMaterial(config);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("missing.key"), std::string::npos);
  config.key_file = dir.File("a.key");
  Result<TlsMaterial> good = LoadTlsMaterial(config);
  ASSERT_TRUE(good.ok()) << good.status().message();
  EXPECT_EQ(good->priorities, "NORMAL:-VERS-ALL:+VERS-TLS1.2:+VERS-TLS1.3:-RSA:-SHA1");
}

}  // namespace
}  // namespace gpuscope::http
