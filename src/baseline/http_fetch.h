// The table of the HTTP client's module (libgpuscope-curl.so, built from
// src/baseline/curl/; base/module.h says why it is a module). PromClient
// loads it on its first request, so `gpuscope serve` never maps libcurl.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "baseline/prom_client.h"

namespace gpuscope::baseline {

inline constexpr char kCurlModule[] = "libgpuscope-curl.so";

// The most one answer may hold, counted on the wire and again once inflated
// (gzip): past it the transfer stops and the error names the URL and the
// limit, so a hostile or broken server cannot fill the memory of the process
// that asked. A big Prometheus answer is a few MiB.
inline constexpr std::size_t kMaxAnswerBytes = std::size_t{64} << 20;

// One request with a method, headers and a body (the Kubernetes remediation's
// GET and PATCH, src/remediate/kubernetes.h). TLS is verified against
// `ca_file` when set, else the system's CAs.
struct HttpRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::string> headers;  // "Name: value"
  std::string body;
  std::string ca_file;
  double timeout_s = 10;
};

struct HttpFetcher {
  // The body of GET `url` with the client's TLS and basic-auth options;
  // `status` gets the HTTP status. Errors name options.server and its URL.
  Result<std::string> (*get)(const std::string& url, const ClientOptions& options,
                             const std::string& password, long* status);
  // The body of `request`'s answer; `status` gets the HTTP status. Errors name the URL.
  Result<std::string> (*send)(const HttpRequest& request, long* status);
};

}  // namespace gpuscope::baseline

// The module's entry point; weak, so it is null unless the process links the
// module's code in.
extern "C" const gpuscope::baseline::HttpFetcher* gpuscope_http_fetcher() __attribute__((weak));
