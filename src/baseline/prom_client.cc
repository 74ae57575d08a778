#include "baseline/prom_client.h"

#include <curl/curl.h>

#include <cmath>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

namespace gpuscope::baseline {
namespace {

size_t Append(char* data, size_t size, size_t count, void* out) {
  static_cast<std::string*>(out)->append(data, size * count);
  return size * count;
}

Status Readable(const std::string& path, const char* option) {
  if (path.empty()) return Status::Ok();
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(std::string(option) + " " + path + ": cannot read");
  return Status::Ok();
}

void CurlInitOnce() {
  static const bool done = [] { return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; }();
  (void)done;
}

double ParseValue(const nlohmann::json& value) {
  const std::string text = value.at(1).get<std::string>();
  if (text == "NaN") return std::nan("");
  if (text == "+Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  return std::stod(text);
}

}  // namespace

Result<PromClient> PromClient::Create(ClientOptions options) {
  if (!options.url.starts_with("http://") && !options.url.starts_with("https://")) {
    return Status::InvalidArgument(options.url_option + " " + options.url +
                                   ": want an http:// or https:// URL");
  }
  while (options.url.ends_with('/')) options.url.pop_back();
  GPUSCOPE_RETURN_IF_ERROR(Readable(options.ca_file, "--ca-file"));
  GPUSCOPE_RETURN_IF_ERROR(Readable(options.cert_file, "--cert-file"));
  GPUSCOPE_RETURN_IF_ERROR(Readable(options.key_file, "--key-file"));
  if (options.cert_file.empty() != options.key_file.empty()) {
    return Status::InvalidArgument("--cert-file and --key-file go together");
  }
  if (options.username.empty() != options.password_file.empty()) {
    return Status::InvalidArgument("--basic-auth-user and --basic-auth-password-file go together");
  }
  std::string password;
  if (!options.password_file.empty()) {
    std::ifstream in(options.password_file);
    if (!in || !std::getline(in, password) || password.empty()) {
      return Status::InvalidArgument("--basic-auth-password-file " + options.password_file +
                                     ": cannot read a password from its first line");
    }
  }
  return PromClient(std::move(options), std::move(password));
}

PromClient::PromClient(ClientOptions options, std::string password)
    : options_(std::move(options)), password_(std::move(password)) {}

Result<std::string> PromClient::Fetch(const std::string& url, long* status) const {
  CurlInitOnce();
  std::unique_ptr<CURL, decltype(&curl_easy_cleanup)> curl(curl_easy_init(), curl_easy_cleanup);
  if (!curl) return Status::Internal("curl_easy_init failed");
  CURL* c = curl.get();
  std::string body;
  char error[CURL_ERROR_SIZE] = {0};
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, Append);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &body);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(options_.timeout_seconds * 1000));
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  // Accept gzip (a gpuscope agent compresses its larger API answers).
  curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
  if (!options_.ca_file.empty()) curl_easy_setopt(c, CURLOPT_CAINFO, options_.ca_file.c_str());
  if (!options_.cert_file.empty()) {
    curl_easy_setopt(c, CURLOPT_SSLCERT, options_.cert_file.c_str());
    curl_easy_setopt(c, CURLOPT_SSLKEY, options_.key_file.c_str());
  }
  if (!options_.username.empty()) {
    curl_easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
    curl_easy_setopt(c, CURLOPT_USERNAME, options_.username.c_str());
    curl_easy_setopt(c, CURLOPT_PASSWORD, password_.c_str());
  }
  CURLcode rc = curl_easy_perform(c);
  if (rc != CURLE_OK) {
    return Status::Unavailable(options_.server + " at " + options_.url + ": " +
                               (error[0] ? error : curl_easy_strerror(rc)));
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, status);
  if (*status == 401 || *status == 403) {
    return Status::Unavailable(options_.server + " at " + options_.url + " answered HTTP " +
                               std::to_string(*status) + " (check the basic-auth options)");
  }
  return body;
}

Result<std::vector<Sample>> PromClient::Query(const std::string& promql) const {
  CurlInitOnce();
  std::unique_ptr<char, decltype(&curl_free)> escaped(
      curl_easy_escape(nullptr, promql.data(), static_cast<int>(promql.size())), curl_free);
  long status = 0;
  Result<std::string> body = Fetch(options_.url + "/api/v1/query?query=" + escaped.get(), &status);
  if (!body.ok()) return body.status();
  if (status != 200 && status != 400 && status != 422) {
    return Status::Unavailable(options_.server + " at " + options_.url + " answered HTTP " +
                               std::to_string(status) + ": " + body->substr(0, 200));
  }
  return ParseQueryResponse(*body);
}

Result<std::string> PromClient::Get(const std::string& path) const {
  long status = 0;
  Result<std::string> body = Fetch(options_.url + path, &status);
  if (!body.ok()) return body.status();
  if (status != 200) {
    std::string first = body->substr(0, body->find('\n'));
    return Status::Unavailable(options_.server + " at " + options_.url + " answered HTTP " +
                               std::to_string(status) + " for " + path + ": " +
                               first.substr(0, 200));
  }
  return body;
}

Result<std::vector<Sample>> ParseQueryResponse(const std::string& body) {
  nlohmann::json doc = nlohmann::json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument("Prometheus answer is not JSON: " + body.substr(0, 200));
  }
  if (doc.value("status", "") != "success") {
    return Status::InvalidArgument("Prometheus query failed: " + doc.value("error", body));
  }
  try {
    const auto& data = doc.at("data");
    if (data.at("resultType") != "vector") {
      return Status::InvalidArgument("Prometheus answered a " +
                                     data.at("resultType").get<std::string>() + ", not a vector");
    }
    std::vector<Sample> out;
    for (const auto& r : data.at("result")) {
      Sample s;
      for (const auto& [k, v] : r.at("metric").items()) s.labels[k] = v.get<std::string>();
      s.value = ParseValue(r.at("value"));
      out.push_back(std::move(s));
    }
    return out;
  } catch (const std::exception& e) {
    return Status::InvalidArgument(std::string("Prometheus answer malformed: ") + e.what());
  }
}

}  // namespace gpuscope::baseline
