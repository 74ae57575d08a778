// gpuscope's HTTP server (libmicrohttpd): GET/HEAD routing to handlers registered by the caller,
// TLS and client certificates, basic auth and response headers from an exporter-toolkit
// web-config file, connection limits and timeouts.
//
// Slow or hostile clients cannot take the scrape path down (docs/security.md): connections are
// limited in all and per client address; a request head must arrive complete within
// `head_timeout` of the connection opening (or of the previous response), however slowly its
// bytes trickle in (http/head_deadline.h); request bodies must keep a minimum rate and all of
// them together fit an in-flight byte budget; bcrypt runs on a small worker pool while the
// connection is suspended, failed checks are rate-limited per client address and verified
// credentials are cached (http/verifier.h, http/basic_auth.h).
//
// The scrape path is cheap and never blocks on collection: a handler returns a body that is a
// shared_ptr to an immutable, pre-rendered string; the server hands that buffer to the socket
// without copying and holds the reference until the response is sent.
//
// Reload() (serve calls it on SIGHUP) re-reads the web-config: users and headers swap in place;
// changed TLS settings start a new daemon on the same listening socket (which the server owns),
// so no connection is refused. Certificate, key and CA files are also watched (mtime, at most
// every `cert_check_interval`) and reloaded when replaced. A bad new config keeps the old one.
//
// Thread safety: Handle() before Start(); Start/Reload/Stop from one controlling thread (Reload
// is also safe against the internal file watcher). Handlers run on server threads, concurrently,
// and must not throw (a throw answers 500).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "gpuscope/status.h"
#include "http/listener.h"

namespace gpuscope::http {

struct FileStamp;  // http/tls.h
class FailureLimiter;
class HeadDeadline;
class VerifierPool;

struct Request {
  std::string_view method;           // "GET" or "HEAD"; "POST" on routes registered with HandlePost
  std::string_view path;             // without the query string
  std::string_view accept;           // Accept header, "" when absent
  std::string_view accept_encoding;  // Accept-Encoding header, "" when absent
  std::vector<std::pair<std::string_view, std::string_view>> query;  // decoded, in order
  // POST routes only: the Content-Type and Content-Encoding headers ("" when absent) and the
  // whole body. A body over the route's limit is not kept: `body_too_large` is set instead (and
  // `body` is empty), so the handler answers in its own protocol's terms.
  std::string_view content_type;
  std::string_view content_encoding;
  std::string_view body;
  bool body_too_large = false;
  // POST routes only: the client's address ("127.0.0.1", "::1"; "" when unknown) and port, and
  // the server's own port (the connection's two ends, to find the peer's socket).
  std::string_view peer;
  uint16_t peer_port = 0, local_port = 0;

  // The first value of query argument `key`, or "" when absent.
  std::string_view QueryValue(std::string_view key) const;
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::shared_ptr<const std::string> body;  // null = empty; sent without copying
  std::vector<std::pair<std::string, std::string>> headers;

  static Response Text(int status, std::string text);
};

using Handler = std::function<Response(const Request&)>;

struct ServerOptions {
  // dcgm-exporter style: ":9400" (default), "host:port", "[::1]:9400", "127.0.0.1:0" (any port).
  std::string listen_address = ":9400";
  // Open connections at most (default 1024); more wait in the kernel's accept queue.
  unsigned max_connections = 1024;
  // Open connections per client address at most (default 32; 0: no per-client limit); more are
  // closed at once.
  unsigned max_connections_per_client = 32;
  // Connections that send nothing, or whose response does not drain, are closed after this
  // (default 10 s, as Prometheus' scrape timeout). libmicrohttpd restarts it on every byte.
  std::chrono::seconds connection_timeout{10};
  // A request head (request line and headers) must be complete within this of the connection
  // opening or of the previous response, however its bytes trickle in (default 5 s).
  std::chrono::milliseconds head_timeout{5000};
  // Memory per connection for the request line and headers (default 16 KiB); larger requests
  // are answered 431/414 by libmicrohttpd. Request bodies are refused (413) except on POST
  // routes (HandlePost), which stream them into memory up to their own limit.
  size_t max_request_bytes = 16 * 1024;
  // Request-body bytes that all connections together may hold in memory (POST routes; default
  // 16 MiB); a body that would pass it is refused with 503 and Retry-After, its connection closed.
  size_t max_body_bytes_in_flight = 16 << 20;
  // A request body must arrive at this average rate, counted from `body_grace` after it starts
  // (default 4096 bytes a second after 10 s; 0: no minimum); slower uploads are closed.
  size_t min_body_bytes_per_second = 4096;
  std::chrono::milliseconds body_grace{10000};
  // Worker threads (default 0: half the CPUs the process may use, base::UsableCpus, 1 to 4).
  unsigned threads = 0;
  // exporter-toolkit web-config file (default "": plain HTTP, no auth).
  std::string web_config_file;
  // How often certificate files are checked for replacement (default 3 s; 0 disables).
  std::chrono::milliseconds cert_check_interval{3000};
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // Stop()
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Who may call a path. kPublic skips basic auth (not TLS client certificates,
  // which the handshake checks): for probes that cannot send credentials, such
  // as a kubelet's httpGet; such a handler must reveal nothing sensitive.
  enum class Access { kProtected, kPublic };

  // Serves `path` (exact match, e.g. "/metrics"). Call before Start().
  void Handle(std::string path, Handler handler, Access access = Access::kProtected);
  // Serves POST requests with a body of at most `max_body_bytes` on `path` (other methods get
  // 405). Authentication and client certificates are checked before any body byte is read.
  void HandlePost(std::string path, Handler handler, size_t max_body_bytes);

  // Loads the web-config, binds the address and starts serving. Errors name the file/address,
  // e.g. "cannot listen on :9400: address already in use".
  Status Start();

  // Re-reads the web-config file and TLS files; on error the running config stays.
  Status Reload();

  // Stops serving and closes the socket; in-flight connections are closed. Idempotent.
  void Stop();

  // The bound port after Start(), 0 once stopped; any thread.
  uint16_t port() const { return port_.load(); }
  bool tls_enabled() const;
  uint64_t reload_count() const { return reloads_.load(); }  // successful TLS (re)starts
  uint64_t heads_expired() const;  // connections cut for missing the head deadline
  uint64_t slow_bodies() const;    // connections cut for a body under the minimum rate
  size_t body_bytes_in_flight() const { return body_bytes_.load(); }

 private:
  struct Config;
  struct Daemon;
  struct Exchange;

  Result<std::shared_ptr<const Config>> LoadConfig() const;
  Status Apply(std::shared_ptr<const Config> config, bool force_restart);
  Status StartDaemon(std::shared_ptr<const Config> config);
  // Takes `bytes` from the in-flight body budget; false when they do not fit.
  bool ReserveBody(size_t bytes);
  void WatchFiles();
  void ReloadChangedCertificates(std::vector<FileStamp>& failed);

  ServerOptions options_;
  struct Route {
    Handler handler;
    Access access = Access::kProtected;
    bool post = false;    // a POST route (HandlePost)
    size_t max_body = 0;  // its body limit
  };
  std::unordered_map<std::string, Route> routes_;
  Listener listener_;              // under control_mu_
  std::atomic<uint16_t> port_{0};  // listener_'s port, for port() without the lock
  mutable std::mutex control_mu_;  // Start/Reload/Stop/watcher
  std::atomic<std::shared_ptr<const Config>> config_;  // read per request
  std::unique_ptr<Daemon> daemon_;
  std::atomic<uint64_t> reloads_{0};
  std::atomic<size_t> body_bytes_{0};  // held by request bodies (max_body_bytes_in_flight)
  std::unique_ptr<HeadDeadline> head_deadline_;  // while running
  std::unique_ptr<VerifierPool> verifier_;       // while running
  std::unique_ptr<FailureLimiter> failures_;
  std::thread watcher_;
  std::mutex watch_mu_;
  std::condition_variable watch_cv_;
  bool stopping_ = false;
};

}  // namespace gpuscope::http
