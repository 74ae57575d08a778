// Internals of http::Server shared by server.cc (daemon lifecycle, configuration) and
// exchange.cc (one request: screening, authentication, routing). Not a public interface.
#pragma once

#include <microhttpd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "http/basic_auth.h"
#include "http/server.h"
#include "http/tls.h"
#include "http/web_config.h"

namespace gpuscope::http {

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
  // Connections suspended for a bcrypt check; MHD must not stop under them.
  std::mutex pending_mu;
  std::condition_variable pending_cv;
  unsigned pending = 0;
  std::atomic<bool> retiring{false};

  ~Daemon() { Retire(std::chrono::milliseconds(0)); }

  // Stops accepting, lets open connections finish for up to `grace`, waits for pending bcrypt
  // checks (which skip bcrypt once retiring), then stops.
  void Retire(std::chrono::milliseconds grace);

  static MHD_Result Dispatch(void* cls, MHD_Connection* connection, const char* url,
                             const char* method, const char* version, const char* upload_data,
                             size_t* upload_data_size, void** con_cls);
  static void OnConnection(void* cls, MHD_Connection* connection, void** socket_context,
                           MHD_ConnectionNotificationCode code);
  static void* OnUri(void* cls, const char* uri, MHD_Connection* connection);
  static void OnCompleted(void* cls, MHD_Connection* connection, void** con_cls,
                          MHD_RequestTerminationCode code);
  // What screening decided: answer now, wait (the connection is suspended
  // while a worker checks the password), or go on to the route.
  struct Screening {
    std::optional<Response> answer;
    bool suspended = false;
  };
  Screening Screen(MHD_Connection* connection, std::string_view url, std::string_view version,
                   Exchange& exchange, const Config& current);
  Screening Authenticate(MHD_Connection* connection, Exchange& exchange, const Config& current);
  void StartVerification(MHD_Connection* connection, Exchange& exchange,
                         std::shared_ptr<const BasicAuth> auth, Credentials credentials,
                         std::string client);
  Response Serve(MHD_Connection* connection, std::string_view url, std::string_view method,
                 const Exchange& exchange) const;
  // A POST route's body: appends one chunk, or marks the body too large (over the route's
  // limit) or over budget (the server's in-flight bytes) and drops the rest.
  void TakeUpload(Exchange& exchange, const char* data, size_t* size);
};

// One request, from its request line to its completion.
struct Server::Exchange {
  enum class Auth { kUnchecked, kPending, kPassed, kFailed };
  bool bad_uri = false;                      // an encoded NUL (%00) in the request target
  bool head_seen = false;                    // the handler was called once
  bool screened = false;                     // Screen() passed (checked once per request)
  bool head_pending = false;                 // a POST's head call waited for a bcrypt check
  const Route* route = nullptr;              // a POST route, found at the head
  std::string body;                          // its body so far
  bool body_too_large = false;               // over the route's limit: the rest is discarded
  bool over_budget = false;                  // over the in-flight budget: discarded, 503
  std::atomic<Auth> auth{Auth::kUnchecked};  // written by a verifier worker while suspended
  std::atomic<size_t>* budget = nullptr;     // the server's in-flight body bytes
  size_t reserved = 0;                       // taken from it for `body`

  Exchange() = default;
  Exchange(const Exchange&) = delete;
  Exchange& operator=(const Exchange&) = delete;
  ~Exchange() { Release(); }
  // Gives the body's bytes back to the budget and frees them.
  void Release() {
    if (budget != nullptr) budget->fetch_sub(reserved);
    reserved = 0;
    body.clear();
    body.shrink_to_fit();
  }
};

}  // namespace gpuscope::http
