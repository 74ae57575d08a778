#include "http/listener.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <memory>
#include <utility>

namespace gpuscope::http {
namespace {

std::string LowerFirst(std::string text) {
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z') text[0] = static_cast<char>(text[0] + 32);
  return text;
}

Status ListenError(const std::string& address, const std::string& reason) {
  return Status::Unavailable("cannot listen on " + address + ": " + LowerFirst(reason));
}

// Binds one candidate address; returns the fd or -errno.
int BindOne(const addrinfo& ai, int backlog) {
  int fd = socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai.ai_protocol);
  if (fd < 0) return -errno;
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));  // restarts despite TIME_WAIT
  if (ai.ai_family == AF_INET6) {
    int v6only = 0;  // "[::]" also serves IPv4, as Go's ":9400" does
    setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &v6only, sizeof(v6only));
  }
  if (bind(fd, ai.ai_addr, ai.ai_addrlen) != 0 || listen(fd, backlog) != 0) {
    int error = errno;
    close(fd);
    return -error;
  }
  return fd;
}

uint16_t BoundPort(int fd) {
  sockaddr_storage addr{};
  socklen_t len = sizeof(addr);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) return 0;
  if (addr.ss_family == AF_INET) return ntohs(reinterpret_cast<sockaddr_in*>(&addr)->sin_port);
  return ntohs(reinterpret_cast<sockaddr_in6*>(&addr)->sin6_port);
}

}  // namespace

Result<ListenAddress> ParseListenAddress(std::string_view address) {
  auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("invalid listen address \"" + std::string(address) +
                                   "\": " + why);
  };
  size_t colon = address.rfind(':');
  if (colon == std::string_view::npos) return bad("expected host:port or :port");
  ListenAddress out;
  std::string_view host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("put an IPv6 address in brackets, e.g. [::1]:9400");
  }
  out.host = std::string(host);
  std::string_view port = address.substr(colon + 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (port.empty() || ec != std::errc() || end != port.data() + port.size() || value > 65535) {
    return bad("port must be a number 0..65535");
  }
  out.port = static_cast<uint16_t>(value);
  return out;
}

Result<Listener> Listener::Bind(const std::string& address, int backlog) {
  Result<ListenAddress> parsed = ParseListenAddress(address);
  if (!parsed.ok()) return parsed.status();
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  std::string port = std::to_string(parsed->port);
  int rc = getaddrinfo(parsed->host.empty() ? nullptr : parsed->host.c_str(), port.c_str(), &hints,
                       &found);
  if (rc != 0) return ListenError(address, gai_strerror(rc));
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> list(found, &freeaddrinfo);
  // For ":port" try the dual-stack IPv6 wildcard first, then IPv4 (hosts without IPv6).
  int error = EADDRNOTAVAIL;
  for (int pass = 0; pass < 2; ++pass) {
    for (addrinfo* ai = found; ai != nullptr; ai = ai->ai_next) {
      bool v6 = ai->ai_family == AF_INET6;
      if (parsed->host.empty() && v6 != (pass == 0)) continue;
      if (!parsed->host.empty() && pass == 1) continue;
      int fd = BindOne(*ai, backlog);
      if (fd >= 0) return Listener(fd, BoundPort(fd));
      error = -fd;
      if (error == EADDRINUSE) return ListenError(address, std::strerror(error));
    }
  }
  return ListenError(address, std::strerror(error));
}

Listener::Listener(Listener&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), port_(other.port_) {}

Listener& Listener::operator=(Listener&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    port_ = other.port_;
  }
  return *this;
}

Listener::~Listener() {
  if (fd_ >= 0) close(fd_);
}

}  // namespace gpuscope::http
