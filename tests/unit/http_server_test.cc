#include <arpa/inet.h>
#include <crypt.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "http/listener.h"
#include "http/server.h"
#include "http_test_util.h"

namespace gpuscope::http {
namespace {

using ::gpuscope::http::testing::Curl;
using ::gpuscope::http::testing::CurlResult;
using ::gpuscope::http::testing::TempDir;

std::string Bcrypt(const std::string& password) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  EXPECT_NE(crypt_gensalt_rn("$2y$", 10, nullptr, 0, salt, sizeof(salt)), nullptr);
  auto data = std::make_unique<crypt_data>();
  return crypt_r(password.c_str(), salt, data.get());
}

int ConnectTo(uint16_t port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

// Sends `request` on a fresh connection; returns everything read until the server closes.
std::string RawRequest(uint16_t port, const std::string& request) {
  int fd = ConnectTo(port);
  if (fd < 0) return "";
  timeval timeout{5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  if (send(fd, request.data(), request.size(), MSG_NOSIGNAL) < 0) {
    close(fd);
    return "";
  }
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = recv(fd, buffer, sizeof(buffer), 0)) > 0) out.append(buffer, n);
  close(fd);
  return out;
}

// A server on an ephemeral port with /metrics and /echo routes.
class ServerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Server> StartServer(ServerOptions options) {
    options.listen_address = "127.0.0.1:0";
    auto server = std::make_unique<Server>(options);
    server->Handle("/metrics", [this](const Request&) {
      Response response;
      response.content_type = "text/plain; version=0.0.4; charset=utf-8";
      response.body = body_;
      return response;
    });
    server->Handle("/echo", [](const Request& request) {
      return Response::Text(200, std::string(request.method) + " " + std::string(request.path) +
                                     " accept=" + std::string(request.accept) +
                                     " q=" + std::string(request.QueryValue("q")));
    });
    server->Handle("/throw", [](const Request&) -> Response { throw std::runtime_error("x"); });
    Status status = server->Start();
    EXPECT_TRUE(status.ok()) << status.message();
    return server;
  }

  std::string Url(const Server& server, const std::string& path) {
    return "http://127.0.0.1:" + std::to_string(server.port()) + path;
  }

  std::shared_ptr<const std::string> body_ =
      std::make_shared<const std::string>("DCGM_FI_DEV_GPU_TEMP{gpu=\"0\"} 41\n");
  TempDir dir_;
};

TEST_F(ServerTest, GetReturnsTheBody) {
  auto server = StartServer({});
  ASSERT_NE(server->port(), 0);
  CurlResult result = Curl(dir_, Url(*server, "/metrics"));
  EXPECT_EQ(result.code, 200);
  EXPECT_EQ(result.body, *body_);
  EXPECT_NE(result.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos);
  EXPECT_FALSE(server->tls_enabled());
}

TEST_F(ServerTest, APlainServerNeverMapsGnuTls) {
  if (testing::MapsGnuTls()) GTEST_SKIP() << "an earlier test in this process loaded GnuTLS";
  auto server = StartServer({});
  EXPECT_EQ(Curl(dir_, Url(*server, "/metrics")).code, 200);
  EXPECT_FALSE(testing::MapsGnuTls());
}

TEST_F(ServerTest, HeadSendsHeadersOnly) {
  auto server = StartServer({});
  std::string response = RawRequest(server->port(), "HEAD /metrics HTTP/1.0\r\n\r\n");
  EXPECT_EQ(response.rfind("HTTP/1.0 200", 0) == 0 || response.rfind("HTTP/1.1 200", 0) == 0, true)
      << response;
  EXPECT_NE(response.find("Content-Length: " + std::to_string(body_->size())), std::string::npos);
  ASSERT_GE(response.size(), 4u);
  EXPECT_EQ(response.substr(response.size() - 4), "\r\n\r\n");  // nothing after the headers
}

TEST_F(ServerTest, OtherMethodsAre405WithAllow) {
  auto server = StartServer({});
  CurlResult post = Curl(dir_, "-X POST " + Url(*server, "/metrics"));
  EXPECT_EQ(post.code, 405);
  EXPECT_NE(post.headers.find("Allow: GET, HEAD"), std::string::npos);
  EXPECT_EQ(Curl(dir_, "-X DELETE " + Url(*server, "/metrics")).code, 405);
}

TEST_F(ServerTest, UnknownPathIs404AndRequestReachesHandler) {
  auto server = StartServer({});
  EXPECT_EQ(Curl(dir_, Url(*server, "/nope")).code, 404);
  CurlResult echo = Curl(dir_, "-H 'Accept: application/openmetrics-text' '" +
                                   Url(*server, "/echo?q=a%20b&z=1") + "'");
  EXPECT_EQ(echo.code, 200);
  EXPECT_EQ(echo.body, "GET /echo accept=application/openmetrics-text q=a b");
  EXPECT_EQ(Curl(dir_, Url(*server, "/throw")).code, 500);
}

TEST_F(ServerTest, TooLargeRequestsAreRejected) {
  ServerOptions options;
  options.max_request_bytes = 8 * 1024;
  auto server = StartServer(options);
  std::string big(20000, 'x');
  CurlResult header = Curl(dir_, "-H 'X-Big: " + big + "' " + Url(*server, "/metrics"));
  EXPECT_EQ(header.code, 431);  // Request Header Fields Too Large
  EXPECT_EQ(Curl(dir_, "'" + Url(*server, "/metrics?" + big) + "'").code, 414);  // URI Too Long
  CurlResult body = Curl(dir_, "-X GET --data hello " + Url(*server, "/metrics"));
  EXPECT_EQ(body.code, 413);
  EXPECT_EQ(Curl(dir_, Url(*server, "/metrics")).code, 200);  // still serving
}

TEST_F(ServerTest, ConnectionLimitIsRespected) {
  ServerOptions options;
  options.max_connections = 2;
  options.threads = 1;
  auto server = StartServer(options);
  std::vector<int> idle;
  for (int i = 0; i < 2; ++i) idle.push_back(ConnectTo(server->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // let the server accept them
  EXPECT_NE(Curl(dir_, "--max-time 1 " + Url(*server, "/metrics")).code, 200);
  for (int i = 0; i < 30; ++i) idle.push_back(ConnectTo(server->port()));  // far over the limit
  for (int fd : idle) {
    if (fd >= 0) close(fd);
  }
  // Served again once the server has seen the closes (however loaded the machine).
  int code = 0;
  for (int i = 0; i < 100 && code != 200; ++i) {
    code = Curl(dir_, "--max-time 5 " + Url(*server, "/metrics")).code;
    if (code != 200) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(code, 200);
}

TEST_F(ServerTest, ConcurrentScrapesAllSucceed) {
  auto server = StartServer({});
  std::string url = Url(*server, "/metrics");
  int status = -1;
  // 16 parallel clients, 5 requests each, over keep-alive connections.
  std::string command =
      "seq 16 | xargs -P 16 -I{} curl -sS --max-time 5 -o /dev/null -w "
      "'%{http_code}\\n' " +
      url + " " + url + " " + url + " " + url + " " + url + " | sort | uniq -c";
  std::string out = testing::Shell(command, &status);
  EXPECT_EQ(status, 0);
  EXPECT_NE(out.find("80 200"), std::string::npos) << out;
}

TEST_F(ServerTest, PortInUseIsAClearError) {
  auto first = StartServer({});
  ServerOptions options;
  options.listen_address = "127.0.0.1:" + std::to_string(first->port());
  Server second(options);
  Status status = second.Start();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "cannot listen on " + options.listen_address + ": address already in use");
}

TEST_F(ServerTest, BasicAuthAndHeadersFromWebConfig) {
  std::string config = "basic_auth_users:\n  prom: " + Bcrypt("right") +
                       "\nhttp_server_config:\n  headers:\n    X-Frame-Options: deny\n";
  ServerOptions options;
  options.web_config_file = dir_.Write("web.yml", config);
  auto server = StartServer(options);
  std::string url = Url(*server, "/metrics");
  CurlResult none = Curl(dir_, url);
  EXPECT_EQ(none.code, 401);
  EXPECT_NE(none.headers.find("WWW-Authenticate: Basic realm=\"gpuscope\""), std::string::npos);
  EXPECT_EQ(Curl(dir_, "-u prom:wrong " + url).code, 401);
  EXPECT_EQ(Curl(dir_, "-u other:right " + url).code, 401);
  CurlResult ok = Curl(dir_, "-u prom:right " + url);
  EXPECT_EQ(ok.code, 200);
  EXPECT_EQ(ok.body, *body_);
  EXPECT_NE(ok.headers.find("X-Frame-Options: deny"), std::string::npos);
  EXPECT_EQ(Curl(dir_, "-u prom:right " + url).code, 200);  // cached verification

  // Reload swaps the users in place: same daemon, new password.
  uint64_t starts = server->reload_count();
  dir_.Write("web.yml", "basic_auth_users:\n  prom: " + Bcrypt("next") + "\n");
  ASSERT_TRUE(server->Reload().ok());
  EXPECT_EQ(server->reload_count(), starts);
  EXPECT_EQ(Curl(dir_, "-u prom:right " + url).code, 401);
  EXPECT_EQ(Curl(dir_, "-u prom:next " + url).code, 200);

  // A broken file keeps the running config.
  dir_.Write("web.yml", "basic_auth_users:\n  prom: nope\n");
  Status bad = server->Reload();
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("web.yml:2"), std::string::npos) << bad.message();
  EXPECT_EQ(Curl(dir_, "-u prom:next " + url).code, 200);
}

TEST_F(ServerTest, MissingWebConfigFailsStart) {
  ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.web_config_file = dir_.File("absent.yml");
  Server server(options);
  Status status = server.Start();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("absent.yml"), std::string::npos);
}

TEST_F(ServerTest, StopIsPromptWithOpenConnections) {
  auto server = StartServer({});
  int idle = ConnectTo(server->port());
  auto start = std::chrono::steady_clock::now();
  server->Stop();
  server->Stop();  // idempotent
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(5));  // generous: the point is "does not hang"
  close(idle);
}

TEST(ListenAddress, ParsesDcgmForms) {
  Result<ListenAddress> all = ParseListenAddress(":9400");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->host, "");
  EXPECT_EQ(all->port, 9400);
  Result<ListenAddress> v6 = ParseListenAddress("[::1]:9400");
  ASSERT_TRUE(v6.ok());
  EXPECT_EQ(v6->host, "::1");
  Result<ListenAddress> host = ParseListenAddress("localhost:0");
  ASSERT_TRUE(host.ok());
  EXPECT_EQ(host->host, "localhost");
  EXPECT_EQ(host->port, 0);
  EXPECT_FALSE(ParseListenAddress("9400").ok());
  EXPECT_FALSE(ParseListenAddress(":99999").ok());
  EXPECT_FALSE(ParseListenAddress("::1:9400").ok());
  EXPECT_FALSE(ParseListenAddress("host:").ok());
}

TEST(ListenAddress, BindsEphemeralAndWildcardPorts) {
  Result<Listener> loopback = Listener::Bind("127.0.0.1:0");
  ASSERT_TRUE(loopback.ok()) << loopback.status().message();
  EXPECT_NE(loopback->port(), 0);
  Result<Listener> wildcard = Listener::Bind(":0");
  ASSERT_TRUE(wildcard.ok()) << wildcard.status().message();
  EXPECT_NE(wildcard->port(), 0);
  Result<Listener> bad = Listener::Bind("256.1.1.1:0");
  EXPECT_FALSE(bad.ok());
}

}  // namespace
}  // namespace gpuscope::http
