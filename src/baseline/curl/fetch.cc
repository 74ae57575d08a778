// The HTTP client's module (libgpuscope-curl.so): one GET through libcurl.
// The agent loads it through http_fetch.h.
#include <curl/curl.h>

#include <memory>

#include "baseline/http_fetch.h"

namespace gpuscope::baseline {
namespace {

size_t Append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

// One easy handle with what every request sets: URL, answer buffer, errors,
// timeout, no signals, HTTP(S) only, the CA file when given.
struct Handle {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl{nullptr, curl_easy_cleanup};
  std::unique_ptr<std::string> body = std::make_unique<std::string>();
  std::unique_ptr<char[]> error = std::make_unique<char[]>(CURL_ERROR_SIZE);

  // The answer's body; `what` names the request in errors.
  Result<std::string> Perform(const std::string& what, long* status) {
    CURLcode rc = curl_easy_perform(curl.get());
    if (rc != CURLE_OK) {
      return Status::Unavailable(what + ": " + (error[0] ? error.get() : curl_easy_strerror(rc)));
    }
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, status);
    return std::move(*body);
  }
};

Result<Handle> NewHandle(const std::string& url, double timeout_s, const std::string& ca_file) {
  static const bool initialized = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  if (!initialized) return Status::Internal("curl_global_init failed");
  Handle h;
  h.curl.reset(curl_easy_init());
  if (!h.curl) return Status::Internal("curl_easy_init failed");
  CURL* c = h.curl.get();
  h.error[0] = 0;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, h.body.get());
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, h.error.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  if (!ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, ca_file.c_str());
  return h;
}

Result<std::string> Get(const std::string& url, const ClientOptions& options,
                        const std::string& password, long* status) {
  Result<Handle> handle = NewHandle(url, options.timeout_seconds, options.ca_file);
  if (!handle.ok()) return handle.status();
  CURL* c = handle->curl.get();
  // Accept gzip (a gpuscope agent compresses its larger API answers).
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  if (!options.cert_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, options.cert_file.c_str());
    curl_easy_setopt(c, CURLOPT_SSLKEY, options.key_file.c_str());
  }
  if (!options.username.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, options.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, password.c_str());
  }
  return handle->Perform(options.server + " at " + options.url, status);
}

Result<std::string> Send(const HttpRequest& request, long* status) {
  Result<Handle> handle = NewHandle(request.url, request.timeout_s, request.ca_file);
  if (!handle.ok()) return handle.status();
  CURL* c = handle->curl.get();
  curl_slist* headers = nullptr;
  for (const std::string& h : request.headers) headers = curl_slist_append(headers, h.c_str());
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> owned(headers, curl_slist_free_all);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, request.method.c_str());
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  if (request.method != "GET") {
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, request.body.c_str());
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(request.body.size()));
  }
  return handle->Perform(request.method + " " + request.url, status);
}

constexpr HttpFetcher kFetcher = {Get, Send};

}  // namespace
}  // namespace gpuscope::baseline

extern "C" __attribute__((visibility("default"))) const gpuscope::baseline::HttpFetcher*
gpuscope_http_fetcher() {
  return &gpuscope::baseline::kFetcher;
}
