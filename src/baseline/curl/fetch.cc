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

Result<std::string> Get(const std::string& url, const ClientOptions& options,
                        const std::string& password, long* status) {
  static const bool initialized = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK;
  if (!initialized) return Status::Internal("curl_global_init failed");
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Internal("curl_easy_init failed");
  CURL* c = curl.get();
  std::string body;
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options.timeout_seconds * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  // Accept gzip (a gpuscope agent compresses its larger API answers).
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  if (!options.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options.ca_file.c_str());
  if (!options.cert_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, options.cert_file.c_str());
    curl_easy_setopt(c, CURLOPT_SSLKEY, options.key_file.c_str());
  }
  if (!options.username.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, options.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, password.c_str());
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    return Status::Unavailable(options.server + " at " + options.url + ": " +
                               (error[0] ? error : curl_easy_strerror(rc)));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
  return body;
}

constexpr HttpFetcher kFetcher = {Get};

}  // namespace
}  // namespace gpuscope::baseline

extern "C" __attribute__((visibility("default"))) const gpuscope::baseline::HttpFetcher*
gpuscope_http_fetcher() {
  return &gpuscope::baseline::kFetcher;
}
