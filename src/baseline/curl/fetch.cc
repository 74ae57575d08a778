// The HTTP client's module (libgpuscope-curl.so): one GET through libcurl.
// The agent loads it through http_fetch.h.
#include <curl/curl.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <memory>

#include "baseline/http_fetch.h"

namespace gpuscope::baseline {
namespace {

// The answer as it arrives, refused past `limit` bytes. libcurl inflates a
// gzip answer before the write callback, so these are inflated bytes: a
// small gzip bomb is cut off here, not after it fills memory.
struct Answer {
  std::string body;
  std::size_t limit = kMaxAnswerBytes;
  bool too_big = false;
};

size_t Append(char* data, size_t size, size_t count, void* out) {
  auto* answer = static_cast<Answer*>(out);
  const std::size_t n = size * count;
  if (n > answer->limit - answer->body.size()) {
    answer->too_big = true;
    return 0;  // libcurl stops the transfer with CURLE_WRITE_ERROR
  }
  // Grow in powers of two up to the limit: the last copy then moves half the
  // limit. libstdc++'s own doubling from 15 bytes reaches 63 MB and copies it
  // into 126 MB (a 141 MB peak RSS on a 500 MB answer).
  std::string& body = answer->body;
  if (n > body.capacity() - body.size()) {
    body.reserve(std::min(answer->limit, std::bit_ceil(body.size() + n)));
  }
  body.append(data, n);
  return n;
}

// Bounds the bytes on the wire (compressed or not) as they arrive: a
// Content-Length over it is refused before the body (CURLOPT_MAXFILESIZE),
// a chunked or gzip body here.
int OnProgress(void* out, curl_off_t /*dltotal*/, curl_off_t dlnow, curl_off_t, curl_off_t) {
  auto* answer = static_cast<Answer*>(out);
  if (dlnow < 0 || static_cast<std::size_t>(dlnow) <= answer->limit) return 0;
  answer->too_big = true;
  return 1;  // CURLE_ABORTED_BY_CALLBACK
}

// One easy handle with what every request sets: URL, answer buffer, errors,
// timeout, no signals, HTTP(S) only, the CA file when given.
struct Handle {
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl{nullptr, curl_easy_cleanup};
  std::unique_ptr<Answer> answer = std::make_unique<Answer>();
  std::unique_ptr<char[]> error = std::make_unique<char[]>(CURL_ERROR_SIZE);

  // The answer's body; `what` names the request in errors.
  Result<std::string> Perform(const std::string& what, long* status) {
    CURLcode rc = curl_easy_perform(curl.get());
    if (answer->too_big || rc == CURLE_FILESIZE_EXCEEDED) {
      const char* url = nullptr;
      curl_easy_getinfo(curl.get(), CURLINFO_EFFECTIVE_URL, &url);
      return Status::Unavailable(what + ": the answer to " + (url ? url : "?") +
                                 " is larger than " + std::to_string(answer->limit >> 20) +
                                 " MiB (on the wire or inflated): refused");
    }
    if (rc != CURLE_OK) {
      return Status::Unavailable(what + ": " + (error[0] ? error.get() : curl_easy_strerror(rc)));
    }
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, status);
    return std::move(answer->body);
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
  curl_easy_setopt(c, CURLOPT_WRITEDATA, h.answer.get());
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(h.answer->limit));
  curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, OnProgress);
  curl_easy_setopt(c, CURLOPT_XFERINFODATA, h.answer.get());
  curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
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
