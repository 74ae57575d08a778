#include "http/server.h"

#include <fcntl.h>
#include <microhttpd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "base/cpus.h"
#include "base/log.h"
#include "http/basic_auth.h"
#include "http/gnutls_on_demand.h"
#include "http/head_deadline.h"
#include "http/server_internal.h"
#include "http/tls.h"
#include "http/verifier.h"
#include "http/web_config.h"

namespace gpuscope::http {

namespace {
constexpr std::chrono::milliseconds kAcceptSettle{20};
// How long a replaced daemon may finish in-flight requests (idle keep-alive ones are cut).
constexpr std::chrono::milliseconds kRetireGrace{500};
// bcrypt workers and queued checks: a scrape with new credentials waits at most this many
// checks; more get 503 at once. Failures allowed per client address: a burst, then one a second.
constexpr unsigned kVerifierThreads = 2;
constexpr size_t kVerifierQueue = 32;
constexpr unsigned kFailureBurst = 10;
constexpr std::chrono::milliseconds kFailureRefill{1000};
// The kernel's accept queue: a burst of connections waits there instead of being dropped.
constexpr int kListenBacklog = 1024;
// Descriptors besides connections: files, NVML, the event thread, logs.
constexpr rlim_t kSpareDescriptors = 256;

// Each connection holds a descriptor: raise the soft limit toward the hard one, as Go's runtime
// does, so that the connection limit is reachable.
void RaiseDescriptorLimit(unsigned connections) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  rlim_t wanted = connections + kSpareDescriptors;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    limit.rlim_cur = limit.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < wanted) {
    log::Warn(
        "http: open-file limit {} is below max-connections {} + {}; raise it (ulimit -n, "
        "LimitNOFILE=) or lower max-connections",
        limit.rlim_cur, connections, kSpareDescriptors);
  }
}
}  // namespace

namespace {

void LogFromMhd(void*, const char* format, va_list args) {
  char line[512];
  std::vsnprintf(line, sizeof(line), format, args);
  std::string_view text(line);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  log::Debug("http: {}", text);  // client misbehaviour, TLS handshake failures
}

// MHD closes a listen socket it failed to use on some error paths and not on others. The
// number may be reused meanwhile; the socket's inode (kept alive by the listener) tells.
void CloseIfStillOurs(int fd, const struct stat& ours) {
  struct stat now {};
  if (fstat(fd, &now) == 0 && now.st_ino == ours.st_ino && now.st_dev == ours.st_dev) close(fd);
}

}  // namespace

void Server::Daemon::Retire(std::chrono::milliseconds grace) {
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
  retiring = true;  // queued checks skip bcrypt and fail
  {
    std::unique_lock lock(pending_mu);
    pending_cv.wait(lock, [this] { return pending == 0; });
  }
  MHD_stop_daemon(mhd);
  mhd = nullptr;
  if (fd != MHD_INVALID_SOCKET) close(fd);
}

Server::Server(ServerOptions options) : options_(std::move(options)) {}

Server::~Server() { Stop(); }

void Server::HandlePost(std::string path, Handler handler, size_t max_body_bytes) {
  routes_[std::move(path)] = Route{std::move(handler), Access::kProtected, true, max_body_bytes};
}

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
    for (const std::string& warning : config->web.warnings) log::Warn("{}", warning);
  }
  if (config->web.tls) {
    Result<TlsMaterial> tls = LoadTlsMaterial(*config->web.tls);
    if (!tls.ok()) return tls.status().Context(options_.web_config_file);
    config->tls = std::move(*tls);
  }
  if (!config->web.basic_auth_users.empty()) {
    // Verified passwords are cached under an HMAC (GnuTLS).
    Status loaded = LoadGnuTls("basic_auth_users");
    if (!loaded.ok()) return loaded.Context(options_.web_config_file);
  }
  // A fresh instance per load: a reload forgets every verified password.
  config->auth = std::make_shared<BasicAuth>(config->web.basic_auth_users);
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
  // Half the usable CPUs, 1 to 4: the agent shares the node with the work it watches. A pool as
  // wide as the machine fought the load for every core: on 2 CPUs, 2 threads put the scrape p99
  // at 4-8 times the median, 1 thread at 2-3 times with the same throughput.
  if (threads == 0) threads = std::clamp(base::UsableCpus() / 2, 1u, 4u);
  threads = std::min(threads, std::max(1u, options_.max_connections));
  std::vector<MHD_OptionItem> items = {
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&LogFromMhd), nullptr},
      {MHD_OPTION_LISTEN_SOCKET, fd, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(options_.max_connections), nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(options_.connection_timeout.count()),
       nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(options_.max_request_bytes),
       nullptr},
      {MHD_OPTION_PER_IP_CONNECTION_LIMIT,
       static_cast<intptr_t>(options_.max_connections_per_client), nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION, reinterpret_cast<intptr_t>(&Daemon::OnConnection),
       daemon.get()},
      {MHD_OPTION_URI_LOG_CALLBACK, reinterpret_cast<intptr_t>(&Daemon::OnUri), daemon.get()},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&Daemon::OnCompleted), daemon.get()},
  };
  if (threads > 1) items.push_back({MHD_OPTION_THREAD_POOL_SIZE, threads, nullptr});
  // poll(), not epoll: libmicrohttpd 0.9.75's edge-triggered epoll misses an end of stream that
  // arrives with the last bytes, leaving half-closed connections open until a timeout.
  unsigned flags =
      MHD_USE_POLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC | MHD_ALLOW_SUSPEND_RESUME;
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
    return !a || (a->cert_pem == b->cert_pem && a->key_pem == b->key_pem &&
                  a->ca_pem == b->ca_pem && a->priorities == b->priorities &&
                  a->client_auth == b->client_auth && a->min_version == b->min_version);
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
  RaiseDescriptorLimit(options_.max_connections);
  Result<Listener> listener = Listener::Bind(options_.listen_address, kListenBacklog);
  if (!listener.ok()) return listener.status();
  listener_ = std::move(*listener);
  head_deadline_ = std::make_unique<HeadDeadline>(options_.head_timeout, options_.body_grace,
                                                  options_.min_body_bytes_per_second);
  verifier_ = std::make_unique<VerifierPool>(kVerifierThreads, kVerifierQueue);
  failures_ = std::make_unique<FailureLimiter>(kFailureBurst, kFailureRefill);
  Status started = Apply(std::move(*config), true);
  if (!started.ok()) {
    listener_ = Listener();
    return started;
  }
  port_.store(listener_.port());
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
    log::Warn("http: keeping the current certificate: {}", tls.status().message());
    failed = now;
    return;
  }
  failed.clear();
  auto next = std::make_shared<Config>(*current);
  next->tls = std::move(*tls);
  Status status = Apply(std::move(next), false);
  if (status.ok()) {
    log::Info("http: TLS certificate files changed, reloaded");
  } else {
    log::Warn("http: certificate reload failed: {}", status.message());
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
  // After the daemons: their threads call into these until they stop.
  verifier_.reset();
  head_deadline_.reset();
  port_.store(0);
}

bool Server::ReserveBody(size_t bytes) {
  size_t held = body_bytes_.load();
  do {
    if (held + bytes > options_.max_body_bytes_in_flight) return false;
  } while (!body_bytes_.compare_exchange_weak(held, held + bytes));
  return true;
}

uint64_t Server::slow_bodies() const {
  std::lock_guard lock(control_mu_);
  return head_deadline_ == nullptr ? 0 : head_deadline_->slow_bodies();
}

uint64_t Server::heads_expired() const {
  std::lock_guard lock(control_mu_);
  return head_deadline_ == nullptr ? 0 : head_deadline_->expired();
}

}  // namespace gpuscope::http
