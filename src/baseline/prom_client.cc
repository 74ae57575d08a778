#include "baseline/prom_client.h"

#include <cctype>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "base/module.h"
#include "baseline/http_fetch.h"

namespace gpuscope::baseline {
namespace {

Status Readable(const std::string& path, const char* option) {
  if (path.empty()) return Status::Ok();
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(std::string(option) + " " + path + ": cannot read");
  return Status::Ok();
}

// Percent-encodes all but RFC 3986's unreserved characters.
std::string UrlEscape(const std::string& text) {
  std::string out;
  for (unsigned char ch : text) {
    if (std::isalnum(ch) || ch == '-' || ch == '.' || ch == '_' || ch == '~') {
      out += static_cast<char>(ch);
    } else {
      constexpr char kHex[] = "0123456789ABCDEF";
      out += '%', out += kHex[ch >> 4], out += kHex[ch & 15];
    }
  }
  return out;
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
  const auto& fetcher = ModuleTable(kCurlModule, "gpuscope_http_fetcher", gpuscope_http_fetcher);
  if (!fetcher.ok()) return fetcher.status().Context(options_.server + " client");
  Result<std::string> body = (*fetcher)->get(url, options_, password_, status);
  if (body.ok() && (*status == 401 || *status == 403)) {
    return Status::Unavailable(options_.server + " at " + options_.url + " answered HTTP " +
                               std::to_string(*status) + " (check the basic-auth options)");
  }
  return body;
}

Result<std::vector<Sample>> PromClient::Query(const std::string& promql) const {
  long status = 0;
  Result<std::string> body =
      Fetch(options_.url + "/api/v1/query?query=" + UrlEscape(promql), &status);
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
