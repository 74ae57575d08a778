// A small Prometheus HTTP API client (libcurl, loaded on first use: http_fetch.h): instant queries
// against /api/v1/query, over http or https, with the CLI's TLS and basic-auth options. Get()
// fetches any path of the same server (`gpuscope diagnose
// --agent` reads a gpuscope agent's /api/v1/diagnosis with it). TLS verification is always on (a
// private CA goes in --ca-file); a password comes from a file, never from the command line.
//
// Thread safety: one PromClient per thread.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::baseline {

struct ClientOptions {
  std::string url;                  // http(s)://host:port[/prefix]
  std::string ca_file;              // PEM CA bundle to verify the server
  std::string cert_file, key_file;  // client certificate (mTLS)
  std::string username;             // basic auth
  std::string password_file;        // its password (first line), required with username
  double timeout_seconds = 30;
  std::string server = "Prometheus";        // names the server in errors
  std::string url_option = "--prometheus";  // names the URL's option in errors
};

struct Sample {
  std::map<std::string, std::string> labels;
  double value = 0;
};

class PromClient {
 public:
  // Checks the options (URL scheme, files readable). Errors name the option.
  static Result<PromClient> Create(ClientOptions options);

  // An instant query; the vector result's samples.
  Result<std::vector<Sample>> Query(const std::string& promql) const;

  // GET `path` ("/api/v1/diagnosis?format=text") of the server: the body of a
  // 200 answer; any other status is an error carrying the body's first line
  // (NotFound for 404, else Unavailable). With `not_found`, a 404 also leaves
  // the body's first line there, as the server said it (at most 200
  // characters, safe to print): the agent's "id: no GPU matches id \"9\"".
  Result<std::string> Get(const std::string& path, std::string* not_found = nullptr) const;

 private:
  explicit PromClient(ClientOptions options, std::string password);
  // The body of GET `url`; `status` gets the HTTP status (401/403 are errors).
  Result<std::string> Fetch(const std::string& url, long* status) const;
  ClientOptions options_;
  std::string password_;
};

// Percent-encodes all but RFC 3986's unreserved characters (a query value).
std::string UrlEscape(const std::string& text);

// Parses a /api/v1/query answer (vector result). Errors carry Prometheus's.
Result<std::vector<Sample>> ParseQueryResponse(const std::string& body);

}  // namespace gpuscope::baseline
