#include <arpa/inet.h>
#include <microhttpd.h>
#include <netinet/in.h>

#include <algorithm>
#include <charconv>
#include <optional>

#include "base/log.h"
#include "base/text.h"
#include "http/head_deadline.h"
#include "http/server_internal.h"
#include "http/verifier.h"

namespace gpuscope::http {

namespace {

constexpr std::string_view kAllow = "GET, HEAD";

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

// The decoded "Authorization: Basic ..." header; read with its length, so that a NUL in it
// is seen rather than cutting the value short.
std::optional<Credentials> HeaderCredentials(MHD_Connection* connection) {
  const char* value = nullptr;
  size_t size = 0;
  if (MHD_lookup_connection_value_n(connection, MHD_HEADER_KIND, "Authorization",
                                    sizeof("Authorization") - 1, &value, &size) != MHD_YES ||
      value == nullptr) {
    return std::nullopt;
  }
  return ParseBasicAuthorization(std::string_view(value, size));
}

// The client's address, the key of per-client limits ("" when unknown), and its port.
std::string ClientAddress(MHD_Connection* connection, uint16_t* port = nullptr) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (info == nullptr || info->client_addr == nullptr) return "";
  char text[INET6_ADDRSTRLEN] = {};
  const sockaddr* addr = info->client_addr;
  uint16_t network_port = 0;
  if (addr->sa_family == AF_INET) {
    const auto* in = reinterpret_cast<const sockaddr_in*>(addr);
    inet_ntop(AF_INET, &in->sin_addr, text, sizeof(text));
    network_port = in->sin_port;
  } else if (addr->sa_family == AF_INET6) {
    const auto* in6 = reinterpret_cast<const sockaddr_in6*>(addr);
    inet_ntop(AF_INET6, &in6->sin6_addr, text, sizeof(text));
    network_port = in6->sin6_port;
  }
  if (port != nullptr) *port = ntohs(network_port);
  return text;
}

HeadDeadline::Entry* DeadlineEntry(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  return info == nullptr ? nullptr : static_cast<HeadDeadline::Entry*>(info->socket_context);
}

// "%00" anywhere in the raw request target: libmicrohttpd decodes it into a C string, which
// would silently cut "/metrics%00foo" to "/metrics".
bool HasEncodedNul(std::string_view uri) {
  for (size_t at = uri.find('%'); at != std::string_view::npos; at = uri.find('%', at + 1)) {
    if (uri.substr(at + 1, 2) == "00") return true;
  }
  return false;
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

// Every answer tells browsers not to guess its type (a text body must never run as a page),
// unless the web-config's headers or the handler set the header already.
bool NamesHeader(const std::vector<std::pair<std::string, std::string>>& headers,
                 std::string_view name) {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& header) {
    return base::EqualsIgnoreCase(header.first, name);
  });
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
  constexpr std::string_view kNoSniff = "X-Content-Type-Options";
  if (!NamesHeader(web.headers, kNoSniff) && !NamesHeader(response.headers, kNoSniff)) {
    MHD_add_response_header(mhd, kNoSniff.data(), "nosniff");
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

// A malformed request: answered, and the connection closed (its framing is not trusted).
Response BadRequest(const std::string& why) {
  Response response = Response::Text(400, "Bad Request: " + why + "\n");
  response.headers.emplace_back("Connection", "close");
  return response;
}

Response RetryLater(int status, std::string text, std::chrono::seconds after) {
  Response response = Response::Text(status, std::move(text));
  response.headers.emplace_back("Retry-After", std::to_string(std::max<long>(after.count(), 1)));
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

void Server::Daemon::OnConnection(void* cls, MHD_Connection* connection, void** socket_context,
                                  MHD_ConnectionNotificationCode code) {
  auto* daemon = static_cast<Daemon*>(cls);
  HeadDeadline& deadline = *daemon->server->head_deadline_;
  if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
    deadline.Closed(static_cast<HeadDeadline::Entry*>(*socket_context));
    *socket_context = nullptr;
    return;
  }
  const MHD_ConnectionInfo* fd =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  if (fd != nullptr) *socket_context = deadline.Open(fd->connect_fd);
  if (!daemon->config->tls) return;
  gnutls_session_t session = TlsSession(connection);
  if (session == nullptr) return;
  AlertOldClientHellos(session, daemon->config->tls->min_version);
  ClientAuth auth = daemon->config->tls->client_auth;
  // Ask for a client certificate in the handshake and refuse bad ones there, as Go's
  // crypto/tls does; Screen() checks again per request.
  gnutls_certificate_server_set_request(session, CertificateRequestFor(auth));
  if (gnutls_certificate_verify_function* verify = VerifierFor(auth)) {
    gnutls_session_set_verify_function(session, verify);
  }
}

void* Server::Daemon::OnUri(void*, const char* uri, MHD_Connection*) {
  auto* exchange = new Exchange;
  exchange->bad_uri = HasEncodedNul(uri == nullptr ? "" : uri);
  return exchange;
}

void Server::Daemon::OnCompleted(void* cls, MHD_Connection* connection, void** con_cls,
                                 MHD_RequestTerminationCode) {
  delete static_cast<Exchange*>(*con_cls);
  *con_cls = nullptr;
  // A keep-alive connection: the next request head is due within the deadline from now.
  static_cast<Daemon*>(cls)->server->head_deadline_->ResponseDone(DeadlineEntry(connection));
}

// Answers that do not depend on the route: a malformed request, a refused client certificate,
// missing or wrong credentials; or a wait while the password is checked.
Server::Daemon::Screening Server::Daemon::Screen(MHD_Connection* connection, std::string_view url,
                                                 std::string_view version, Exchange& exchange,
                                                 const Config& current) {
  if (exchange.bad_uri) return {BadRequest("NUL in the request target")};
  if (version == MHD_HTTP_VERSION_1_1 &&
      MHD_lookup_connection_value(connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_HOST) == nullptr) {
    return {BadRequest("HTTP/1.1 needs a Host header")};
  }
  if (config->tls) {
    std::string problem = CheckClientCertificate(TlsSession(connection), config->tls->client_auth);
    if (!problem.empty()) return {Response::Text(403, "Forbidden: " + problem + "\n")};
  }
  auto route = server->routes_.find(std::string(url));
  bool is_public = route != server->routes_.end() && route->second.access == Access::kPublic;
  if (!current.auth->enabled() || is_public) return {};
  return Authenticate(connection, exchange, current);
}

// The caller learns that it must wait from the return value, never from exchange.auth: a fast
// worker may already have written its verdict (kFailed too) before this returns.
Server::Daemon::Screening Server::Daemon::Authenticate(MHD_Connection* connection,
                                                       Exchange& exchange, const Config& current) {
  switch (exchange.auth.load()) {
    case Exchange::Auth::kPassed:
      return {};
    case Exchange::Auth::kPending:
      return {.suspended = true};
    case Exchange::Auth::kFailed:
      return {Unauthorized()};
    case Exchange::Auth::kUnchecked:
      break;
  }
  std::optional<Credentials> credentials = HeaderCredentials(connection);
  if (!credentials) return {Unauthorized()};
  if (current.auth->Cached(*credentials)) {
    exchange.auth = Exchange::Auth::kPassed;
    return {};
  }
  std::string client = ClientAddress(connection);
  std::chrono::seconds wait{1};
  if (!server->failures_->TryAcquire(client, FailureLimiter::Clock::now(), &wait)) {
    return {RetryLater(429, "Too Many Requests: too many failed logins\n", wait)};
  }
  if (!server->verifier_->Reserve()) {
    server->failures_->Succeeded(client);  // not checked: give the token back
    return {
        RetryLater(503, "Service Unavailable: too many logins at once\n", std::chrono::seconds(1))};
  }
  StartVerification(connection, exchange, current.auth, std::move(*credentials), std::move(client));
  return {.suspended = true};
}

// Suspends the connection while a worker runs bcrypt; the worker resumes it with the verdict,
// and libmicrohttpd calls Dispatch again.
void Server::Daemon::StartVerification(MHD_Connection* connection, Exchange& exchange,
                                       std::shared_ptr<const BasicAuth> auth,
                                       Credentials credentials, std::string client) {
  exchange.auth = Exchange::Auth::kPending;
  {
    std::lock_guard lock(pending_mu);
    ++pending;
  }
  MHD_suspend_connection(connection);
  server->verifier_->Submit([this, connection, &exchange, auth = std::move(auth),
                             credentials = std::move(credentials), client = std::move(client)] {
    bool ok = !retiring && auth->Verify(credentials);
    if (ok) server->failures_->Succeeded(client);
    exchange.auth = ok ? Exchange::Auth::kPassed : Exchange::Auth::kFailed;
    MHD_resume_connection(connection);
    std::lock_guard lock(pending_mu);
    --pending;
    pending_cv.notify_all();
  });
}

namespace {

std::string_view HeaderValue(MHD_Connection* connection, const char* name) {
  const char* value = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, name);
  return value == nullptr ? "" : value;
}

Response MethodNotAllowed(std::string_view allow) {
  Response response = Response::Text(405, "Method Not Allowed\n");
  response.headers.emplace_back("Allow", std::string(allow));
  return response;
}

// A declared Content-Length above `limit` (a chunked body is counted as it arrives).
bool DeclaredTooLarge(MHD_Connection* connection, size_t limit) {
  const std::string_view length = HeaderValue(connection, "Content-Length");
  unsigned long long declared = 0;
  auto [end, ec] = std::from_chars(length.data(), length.data() + length.size(), declared);
  return ec == std::errc() && end == length.data() + length.size() && declared > limit;
}

}  // namespace

void Server::Daemon::TakeUpload(Exchange& exchange, const char* data, size_t* size) {
  const size_t chunk = *size;
  *size = 0;
  if (exchange.over_budget) return;
  const size_t needed = exchange.body.size() + chunk;
  if (exchange.body_too_large || needed > exchange.route->max_body) {
    exchange.body_too_large = true;
    exchange.Release();
    return;
  }
  if (needed > exchange.reserved) {
    // Capacity grows by doubling, up to the route's limit; the budget pays for capacity.
    const size_t want = std::min(std::max(needed, exchange.reserved * 2), exchange.route->max_body);
    if (!server->ReserveBody(want - exchange.reserved)) {
      exchange.over_budget = true;
      exchange.Release();
      return;
    }
    exchange.budget = &server->body_bytes_;
    exchange.reserved = want;
    exchange.body.reserve(want);
  }
  exchange.body.append(data, chunk);
}

Response Server::Daemon::Serve(MHD_Connection* connection, std::string_view url,
                               std::string_view method, const Exchange& exchange) const {
  auto route = server->routes_.find(std::string(url));
  const bool post = route != server->routes_.end() && route->second.post;
  if (post ? method != "POST" : method != "GET" && method != "HEAD") {
    return MethodNotAllowed(post ? "POST" : kAllow);
  }
  if (route == server->routes_.end()) return Response::Text(404, "Not Found\n");
  Request request;
  request.method = method;
  request.path = url;
  request.accept = HeaderValue(connection, "Accept");
  request.accept_encoding = HeaderValue(connection, "Accept-Encoding");
  if (post) {
    request.content_type = HeaderValue(connection, "Content-Type");
    request.content_encoding = HeaderValue(connection, "Content-Encoding");
    request.body = exchange.body;
    request.body_too_large = exchange.body_too_large;
  }
  MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &CollectQuery, &request.query);
  std::string peer;
  if (post) {
    peer = ClientAddress(connection, &request.peer_port);
    request.peer = peer;
    request.local_port = server->port();
  }
  try {
    return route->second.handler(request);
  } catch (const std::exception& e) {
    log::Error("http: handler for {} failed: {}", url, e.what());
  } catch (...) {
    log::Error("http: handler for {} failed", url);
  }
  return Response::Text(500, "Internal Server Error\n");
}

MHD_Result Server::Daemon::Dispatch(void* cls, MHD_Connection* connection, const char* url,
                                    const char* method, const char* version,
                                    const char* upload_data, size_t* upload_data_size,
                                    void** con_cls) {
  auto* daemon = static_cast<Daemon*>(cls);
  auto* exchange = static_cast<Exchange*>(*con_cls);
  if (exchange == nullptr) *con_cls = exchange = new Exchange;  // OnUri was not called
  std::shared_ptr<const Config> current = daemon->server->config_.load();
  // The first daemon accepts before Start() publishes config_: use its own.
  if (current == nullptr) current = daemon->config;
  // Answering on the first call (headers only) would make MHD close the connection, so
  // body-less requests are answered on the second call, when the request is complete; requests
  // with a body are refused at once (and that connection closes), except on POST routes.
  const bool first = !exchange->head_seen;
  if (first) {
    exchange->head_seen = true;
    daemon->server->head_deadline_->HeadReceived(DeadlineEntry(connection));
    auto route = daemon->server->routes_.find(url);
    if (route != daemon->server->routes_.end() && route->second.post &&
        std::string_view(method) == "POST") {
      exchange->route = &route->second;  // screened now, before any body byte is read
    } else if (HasBody(connection)) {
      return Send(connection, Response::Text(413, "Request bodies are not accepted\n"),
                  current->web);
    } else {
      return MHD_YES;
    }
  }
  if (!exchange->screened) {
    Daemon::Screening screening = daemon->Screen(connection, url, version, *exchange, *current);
    if (screening.answer) return Send(connection, std::move(*screening.answer), current->web);
    if (screening.suspended) {
      // On a POST's head call the call after the resume is still before the body.
      exchange->head_pending = first;
      return MHD_YES;
    }
    exchange->screened = true;
    // A declared body over the limit: answered before reading it (the connection closes).
    if (exchange->route != nullptr && DeclaredTooLarge(connection, exchange->route->max_body)) {
      exchange->body_too_large = true;
      return Send(connection, daemon->Serve(connection, url, method, *exchange), current->web);
    }
    if (exchange->route != nullptr) {
      daemon->server->head_deadline_->BodyStarted(DeadlineEntry(connection));
    }
    if (first || exchange->head_pending) return MHD_YES;  // the body comes next
  }
  if (*upload_data_size != 0) {  // only POST routes get this far with a body
    daemon->server->head_deadline_->BodyProgress(DeadlineEntry(connection), *upload_data_size);
    // Over the route's limit (chunked) or the in-flight budget: the rest is read and dropped
    // (libmicrohttpd cannot answer in the middle of a body), then answered.
    daemon->TakeUpload(*exchange, upload_data, upload_data_size);
    return MHD_YES;
  }
  daemon->server->head_deadline_->BodyDone(DeadlineEntry(connection));
  if (exchange->over_budget) {
    Response busy = RetryLater(503, "Service Unavailable: too many request bodies in flight\n",
                               std::chrono::seconds(1));
    busy.headers.emplace_back("Connection", "close");
    return Send(connection, std::move(busy), current->web);
  }
  return Send(connection, daemon->Serve(connection, url, method, *exchange), current->web);
}

}  // namespace gpuscope::http
