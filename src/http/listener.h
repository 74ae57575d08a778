// The listening socket of the HTTP server, bound by gpuscope itself (not by libmicrohttpd) so
// that a daemon can be restarted on the same socket (TLS reload) without refusing connections,
// and so that "address in use" is reported clearly.
// Addresses follow dcgm-exporter's `-a`: ":9400" (all interfaces, IPv6 and IPv4), "host:9400",
// "127.0.0.1:9400", "[::1]:9400"; port 0 picks a free port (see port()).
// Thread safety: immutable after Bind; fd() may be read from any thread.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::http {

struct ListenAddress {
  std::string host;  // "" = every interface
  uint16_t port = 0;
};

// Splits "host:port" / ":port" / "[v6]:port"; rejects a missing or out-of-range port.
Result<ListenAddress> ParseListenAddress(std::string_view address);

class Listener {
 public:
  // Binds and listens (non-blocking, close-on-exec). Errors read
  // "cannot listen on <address>: <reason>".
  static Result<Listener> Bind(const std::string& address, int backlog = 128);

  Listener() = default;
  Listener(Listener&& other) noexcept;
  Listener& operator=(Listener&& other) noexcept;
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;
  ~Listener();

  int fd() const { return fd_; }
  uint16_t port() const { return port_; }  // the bound port, also when 0 was asked

 private:
  Listener(int fd, uint16_t port) : fd_(fd), port_(port) {}
  int fd_ = -1;
  uint16_t port_ = 0;
};

}  // namespace gpuscope::http
