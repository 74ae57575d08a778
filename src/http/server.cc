#include "http/server.h"

#include <fcntl.h>
#include <microhttpd.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "http/basic_auth.h"
#include "http/tls.h"
#include "http/web_config.h"

namespace gpuscope::http {

namespace {
constexpr std::chrono::milliseconds kAcceptSettle{20};
// How long a replaced daemon may finish in-flight requests (idle keep-alive ones are cut).
constexpr std::chrono::milliseconds kRetireGrace{500};
}  // namespace

struct Server::Config {
  WebConfig web;
  std::shared_ptr<BasicAuth> auth;  // never null; disabled without users
  std::optional<TlsMaterial> tls;
};

// One libmicrohttpd daemon on a duplicate of the listening socket; replaced as a whole when
// the TLS settings change. Owns the MHD handle; the config keeps the key material alive.
struct Server::Daemon {
  Server* server = nullptr;
  std::shared_ptr<const Config> config;
  MHD_Daemon* mhd = nullptr;

  ~Daemon() { Retire(std::chrono::milliseconds(0)); }

  // Stops accepting, lets open connections finish for up to `grace`, then stops.
  void Retire(std::chrono::milliseconds grace) {
    if (mhd == nullptr) return;
    // Quiesce first: MHD_stop_daemon would shut the listening socket down, which all
    // duplicates share; after quiescing it leaves the socket alone and we close our copy.
    MHD_socket fd = MHD_quiesce_daemon(mhd);
    auto deadline = std::chrono::steady_clock::now() + grace;
    // A worker may be registering a connection it accepted just before quiescing.
    if (grace.count() > 0) std::this_thread::sleep_for(kAcceptSettle);
    while (std::chrono::steady_clock::now() < deadline) {
      const MHD_DaemonInfo* info = MHD_get_daemon_info(mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
      if (info == nullptr || info->num_connections == 0) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    MHD_stop_daemon(mhd);
    mhd = nullptr;
    if (fd != MHD_INVALID_SOCKET) close(fd);
  }

  static MHD_Result Dispatch(void* cls, MHD_Connection* connection, const char* url,
                             const char* method, const char* version, const char* upload_data,
                             size_t* upload_data_size, void** con_cls);
  static void OnConnection(void* cls, MHD_Connection* connection, void** socket_context,
                           MHD_ConnectionNotificationCode code);
  Response Serve(MHD_Connection* connection, std::string_view url, std::string_view method,
                 const Config& current) const;
};

namespace {

constexpr std::string_view kAllow = "GET, HEAD";

void LogFromMhd(void*, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof(line), format, args);
  std::string_view text(line);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  spdlog::debug("http: {}", text);  // client misbehaviour, TLS handshake failures
}

template <ClientAuth kAuth>
int VerifyHandshake(gnutls_session_t session) {
  return CheckClientCertificate(session, kAuth).empty() ? 0 : -1;  // -1 aborts the handshake
}

gnutls_certificate_verify_function* VerifierFor(ClientAuth auth) {
  switch (auth) {
    case ClientAuth::kRequireAnyClientCert:
      return &VerifyHandshake<ClientAuth::kRequireAnyClientCert>;
    case ClientAuth::kVerifyClientCertIfGiven:
      return &VerifyHandshake<ClientAuth::kVerifyClientCertIfGiven>;
    case ClientAuth::kRequireAndVerifyClientCert:
      return &VerifyHandshake<ClientAuth::kRequireAndVerifyClientCert>;
    default:
      return nullptr;
  }
}

gnutls_session_t TlsSession(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_GNUTLS_SESSION);
  return info == nullptr ? nullptr : static_cast<gnutls_session_t>(info->tls_session);
}

// Decodes "Authorization: Basic base64(user:password)".
bool BasicCredentials(MHD_Connection* connection, std::string& user, std::string& password) {
  char* pass = nullptr;
  char* name = MHD_basic_auth_get_username_password(connection, &pass);
  bool ok = name != nullptr && pass != nullptr;
  if (ok) {
    user = name;
    password = pass;
  }
  if (name != nullptr) MHD_free(name);
  if (pass != nullptr) MHD_free(pass);
  return ok;
}

MHD_Result CollectQuery(void* cls, MHD_ValueKind, const char* key, const char* value) {
  auto* query = static_cast<std::vector<std::pair<std::string_view, std::string_view>>*>(cls);
  query->emplace_back(key, value == nullptr ? "" : value);
  return MHD_YES;
}

bool HasBody(MHD_Connection* connection) {
  const char* length = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Content-Length");
  const char* chunked =
      MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Transfer-Encoding");
  return (length != nullptr && std::string_view(length) != "0") || chunked != nullptr;
}

// MHD closes a listen socket it failed to use on some error paths and not on others. The
// number may be reused meanwhile; the socket's inode (kept alive by the listener) tells.
void CloseIfStillOurs(int fd, const struct stat& ours) {
  struct stat now {};
  if (fstat(fd, &now) == 0 && now.st_ino == ours.st_ino && now.st_dev == ours.st_dev) close(fd);
}

void ReleaseBody(void* cls) { delete static_cast<std::shared_ptr<const std::string>*>(cls); }

MHD_Result Send(MHD_Connection* connection, Response response, const WebConfig& web) {
  MHD_Response* mhd = nullptr;
  if (response.body != nullptr && !response.body->empty()) {
    // Zero copy: the buffer stays alive through the reference MHD releases when done.
    auto* keep = new std::shared_ptr<const std::string>(std::move(response.body));
    mhd = MHD_create_response_from_buffer_with_free_callback_cls(
        (*keep)->size(), const_cast<char*>((*keep)->data()), &ReleaseBody, keep);
    if (mhd == nullptr) delete keep;
  } else {
    mhd = MHD_create_response_from_buffer(0, nullptr, MHD_RESPMEM_PERSISTENT);
  }
  if (mhd == nullptr) return MHD_NO;
  MHD_add_response_header(mhd, MHD_HTTP_HEADER_CONTENT_TYPE, response.content_type.c_str());
  for (const auto& [name, value] : web.headers) {
    MHD_add_response_header(mhd, name.c_str(), value.c_str());
  }
  for (const auto& [name, value] : response.headers) {
    MHD_add_response_header(mhd, name.c_str(), value.c_str());
  }
  MHD_Result result = MHD_queue_response(connection, static_cast<unsigned>(response.status), mhd);
  MHD_destroy_response(mhd);
  return result;
}

Response Unauthorized() {
  Response response = Response::Text(401, "Unauthorized\n");
  response.headers.emplace_back("WWW-Authenticate", "Basic realm=\"gpuscope\"");
  return response;
}

}  // namespace

std::string_view Request::QueryValue(std::string_view key) const {
  for (const auto& [name, value] : query) {
    if (name == key) return value;
  }
  return "";
}

Response Response::Text(int status, std::string text) {
  Response response;
  response.status = status;
  response.body = std::make_shared<const std::string>(std::move(text));
  return response;
}

void Server::Daemon::OnConnection(void* cls, MHD_Connection* connection, void**,
                                  MHD_ConnectionNotificationCode code) {
  auto* daemon = static_cast<Daemon*>(cls);
  if (code != MHD_CONNECTION_NOTIFY_STARTED || !daemon->config->tls) return;
  gnutls_session_t session = TlsSession(connection);
  if (session == nullptr) return;
  ClientAuth auth = daemon->config->tls->client_auth;
  // Ask for a client certificate in the handshake and refuse bad ones there, as Go's
  // crypto/tls does; Serve() checks again per request.
  gnutls_certificate_server_set_request(session, CertificateRequestFor(auth));
  if (gnutls_certificate_verify_function* verify = VerifierFor(auth)) {
    gnutls_session_set_verify_function(session, verify);
  }
}

Response Server::Daemon::Serve(MHD_Connection* connection, std::string_view url,
                               std::string_view method, const Config& current) const {
  if (config->tls) {
    std::string problem = CheckClientCertificate(TlsSession(connection), config->tls->client_auth);
    if (!problem.empty()) return Response::Text(403, "Forbidden: " + problem + "\n");
  }
  auto route = server->routes_.find(std::string(url));
  const bool is_public = route != server->routes_.end() && route->second.access == Access::kPublic;
  if (current.auth->enabled() && !is_public) {
    std::string user, password;
    if (!BasicCredentials(connection, user, password) || !current.auth->Check(user, password)) {
      return Unauthorized();
    }
  }
  if (method != "GET" && method != "HEAD") {
    Response response = Response::Text(405, "Method Not Allowed\n");
    response.headers.emplace_back("Allow", std::string(kAllow));
    return response;
  }
  if (HasBody(connection)) {
    return Response::Text(413, "Request bodies are not accepted\n");
  }
  if (route == server->routes_.end()) return Response::Text(404, "Not Found\n");
  Request request;
  request.method = method;
  request.path = url;
  const char* accept = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Accept");
  request.accept = accept == nullptr ? "" : accept;
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &CollectQuery, &request.query);
  try {
    return route->second.handler(request);
  } catch (const std::exception& e) {
    spdlog::error("http: handler for {} failed: {}", url, e.what());
  } catch (...) {
    spdlog::error("http: handler for {} failed", url);
  }
  return Response::Text(500, "Internal Server Error\n");
}

MHD_Result Server::Daemon::Dispatch(void* cls, MHD_Connection* connection, const char* url,
                                    const char* method, const char*, const char*, size_t*,
                                    void** con_cls) {
  static int headers_seen;  // per-request marker; nothing to free
  auto* daemon = static_cast<Daemon*>(cls);
  // Answering on the first call (headers only) would make MHD close the connection, so
  // body-less requests are answered on the second call, when the request is complete; requests
  // with a body are refused at once (and that connection closes).
  if (*con_cls == nullptr && !HasBody(connection)) {
    *con_cls = &headers_seen;
    return MHD_YES;
  }
  std::shared_ptr<const Config> current = daemon->server->config_.load();
  // The first daemon accepts before Start() publishes config_: use its own.
  if (current == nullptr) current = daemon->config;
  return Send(connection, daemon->Serve(connection, url, method, *current), current->web);
}

Server::Server(ServerOptions options) : options_(std::move(options)) {}

Server::~Server() { Stop(); }

void Server::Handle(std::string path, Handler handler, Access access) {
  routes_[std::move(path)] = Route{std::move(handler), access};
}

bool Server::tls_enabled() const {
  std::shared_ptr<const Config> config = config_.load();
  return config != nullptr && config->tls.has_value();
}

Result<std::shared_ptr<const Server::Config>> Server::LoadConfig() const {
  auto config = std::make_shared<Config>();
  if (!options_.web_config_file.empty()) {
    Result<WebConfig> web = LoadWebConfig(options_.web_config_file);
    if (!web.ok()) return web.status();
    config->web = std::move(*web);
    for (const std::string& warning : config->web.warnings) spdlog::warn("{}", warning);
  }
  if (config->web.tls) {
    Result<TlsMaterial> tls = LoadTlsMaterial(*config->web.tls);
    if (!tls.ok()) return tls.status().Context(options_.web_config_file);
    config->tls = std::move(*tls);
  }
  // Keep the verified-password cache when the users did not change.
  std::shared_ptr<const Config> old = config_.load();
  if (old != nullptr && old->web.basic_auth_users == config->web.basic_auth_users) {
    config->auth = old->auth;
  } else {
    config->auth = std::make_shared<BasicAuth>(config->web.basic_auth_users);
  }
  return std::shared_ptr<const Config>(std::move(config));
}

Status Server::StartDaemon(std::shared_ptr<const Config> config) {
  auto daemon = std::make_unique<Daemon>();
  daemon->server = this;
  daemon->config = config;
  int fd = fcntl(listener_.fd(), F_DUPFD_CLOEXEC, 0);
  struct stat socket_stat {};
  if (fd < 0 || fstat(fd, &socket_stat) != 0) {
    if (fd >= 0) close(fd);
    return Status::Internal("http: cannot duplicate the listening socket");
  }
  unsigned threads = options_.threads;
  if (threads == 0) threads = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  threads = std::min(threads, std::max(1u, options_.max_connections));
  std::vector<MHD_OptionItem> items = {
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&LogFromMhd), nullptr},
      {MHD_OPTION_LISTEN_SOCKET, fd, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(options_.max_connections), nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(options_.connection_timeout.count()),
       nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(options_.max_request_bytes),
       nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&Daemon::OnConnection),
       daemon.get()},
  };
  if (threads > 1) items.push_back({MHD_OPTION_THREAD_POOL_SIZE, threads, nullptr});
  unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
  if (config->tls) {
    flags |= MHD_USE_TLS;
    const TlsMaterial& tls = *config->tls;
    items.push_back({MHD_OPTION_HTTPS_MEM_CERT, 0, const_cast<char*>(tls.cert_pem.c_str())});
    items.push_back({MHD_OPTION_HTTPS_MEM_KEY, 0, const_cast<char*>(tls.key_pem.c_str())});
    items.push_back({MHD_OPTION_HTTPS_PRIORITIES, 0, const_cast<char*>(tls.priorities.c_str())});
    if (!tls.ca_pem.empty()) {
      items.push_back({MHD_OPTION_HTTPS_MEM_TRUST, 0, const_cast<char*>(tls.ca_pem.c_str())});
    }
  }
  items.push_back({MHD_OPTION_END, 0, nullptr});
  daemon->mhd = MHD_start_daemon(flags, 0, nullptr, nullptr, &Daemon::Dispatch, daemon.get(),
                                 MHD_OPTION_ARRAY, items.data(), MHD_OPTION_END);
  if (daemon->mhd == nullptr) {
    CloseIfStillOurs(fd, socket_stat);
    return Status::Internal("http: libmicrohttpd failed to start on " + options_.listen_address);
  }
  config_.store(config);
  std::swap(daemon_, daemon);
  // The new daemon already accepts; the old one finishes what it has, then goes.
  if (daemon != nullptr) daemon->Retire(kRetireGrace);
  reloads_.fetch_add(1);
  return Status::Ok();
}

Status Server::Apply(std::shared_ptr<const Config> config, bool force_restart) {
  std::shared_ptr<const Config> old = config_.load();
  auto same_tls = [](const std::optional<TlsMaterial>& a, const std::optional<TlsMaterial>& b) {
    if (a.has_value() != b.has_value()) return false;
    return !a ||
           (a->cert_pem == b->cert_pem && a->key_pem == b->key_pem && a->ca_pem == b->ca_pem &&
            a->priorities == b->priorities && a->client_auth == b->client_auth);
  };
  if (daemon_ == nullptr || force_restart || old == nullptr || !same_tls(old->tls, config->tls)) {
    return StartDaemon(std::move(config));
  }
  config_.store(std::move(config));  // users and headers: in place, no restart
  return Status::Ok();
}

Status Server::Start() {
  std::lock_guard lock(control_mu_);
  if (daemon_ != nullptr) return Status::Ok();
  Result<std::shared_ptr<const Config>> config = LoadConfig();
  if (!config.ok()) return config.status();
  Result<Listener> listener = Listener::Bind(options_.listen_address);
  if (!listener.ok()) return listener.status();
  listener_ = std::move(*listener);
  Status started = Apply(std::move(*config), true);
  if (!started.ok()) {
    listener_ = Listener();
    return started;
  }
  {
    std::lock_guard watch_lock(watch_mu_);
    stopping_ = false;
  }
  if (options_.cert_check_interval.count() > 0) watcher_ = std::thread([this] { WatchFiles(); });
  return Status::Ok();
}

Status Server::Reload() {
  std::lock_guard lock(control_mu_);
  if (daemon_ == nullptr) return Status::Unavailable("http: server is not running");
  Result<std::shared_ptr<const Config>> config = LoadConfig();
  if (!config.ok()) return config.status().Context("reloading web config");
  return Apply(std::move(*config), false);
}

void Server::WatchFiles() {
  std::vector<FileStamp> failed;  // stamps of files that failed to load: no repeated logs
  std::unique_lock watch_lock(watch_mu_);
  while (
      !watch_cv_.wait_for(watch_lock, options_.cert_check_interval, [this] { return stopping_; })) {
    watch_lock.unlock();
    ReloadChangedCertificates(failed);
    watch_lock.lock();
  }
}

void Server::ReloadChangedCertificates(std::vector<FileStamp>& failed) {
  std::lock_guard lock(control_mu_);
  std::shared_ptr<const Config> current = config_.load();
  if (daemon_ == nullptr || current == nullptr || !current->tls) return;
  std::vector<std::string> paths;
  for (const FileStamp& stamp : current->tls->stamps) paths.push_back(stamp.path);
  std::vector<FileStamp> now = StampFiles(paths);
  if (now == current->tls->stamps || now == failed) return;
  Result<TlsMaterial> tls = LoadTlsMaterial(*current->web.tls);
  if (!tls.ok()) {
    spdlog::warn("http: keeping the current certificate: {}", tls.status().message());
    failed = now;
    return;
  }
  failed.clear();
  auto next = std::make_shared<Config>(*current);
  next->tls = std::move(*tls);
  Status status = Apply(std::move(next), false);
  if (status.ok()) {
    spdlog::info("http: TLS certificate files changed, reloaded");
  } else {
    spdlog::warn("http: certificate reload failed: {}", status.message());
  }
}

void Server::Stop() {
  {
    std::lock_guard watch_lock(watch_mu_);
    stopping_ = true;
  }
  watch_cv_.notify_all();
  if (watcher_.joinable()) watcher_.join();
  std::lock_guard lock(control_mu_);
  daemon_.reset();
  listener_ = Listener();
}

}  // namespace gpuscope::http
