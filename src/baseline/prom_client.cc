#include "baseline/prom_client.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/module.h"
#include "base/text.h"
#include "baseline/http_fetch.h"

namespace gpuscope::baseline {
namespace {

Status Readable(const std::string& path, const char* option) {
  if (path.empty()) return Status::Ok();
  std::ifstream in(path);
  if (!in) return Status::InvalidArgument(std::string(option) + " " + path + ": cannot read");
  return Status::Ok();
}

using nlohmann::json;

// What an answer may hold before it is parsed (base::JsonShapeProblem): a
// sample is about 20 values, so 100,000 series per query.
constexpr std::size_t kMaxJsonDepth = 32;
constexpr std::size_t kMaxJsonValues = 2'000'000;

// A sample's value, [unix time, "text"]; nullopt unless both have their types
// and the text is a number (Prometheus writes NaN, +Inf and -Inf by name).
std::optional<double> ParseValue(const json& value) {
  if (!value.is_array() || value.size() != 2 || !value[0].is_number() || !value[1].is_string()) {
    return std::nullopt;
  }
  const std::string& text = value[1].get_ref<const std::string&>();
  if (text == "NaN") return std::nan("");
  if (text == "+Inf" || text == "Inf") return INFINITY;
  if (text == "-Inf") return -INFINITY;
  double out = 0;
  const char* end = text.data() + text.size();
  auto [stop, error] = std::from_chars(text.data(), end, out);
  if (text.empty() || error != std::errc() || stop != end) return std::nullopt;
  return out;
}

Status Malformed(const std::string& field, const std::string& want) {
  return Status::InvalidArgument("Prometheus answer malformed: " + field + " is not " + want);
}

// One element of data.result: {"metric": {label: "value"}, "value": [t, "v"]}.
Result<Sample> ParseSample(const json& item, std::size_t index) {
  const std::string where = "data.result[" + std::to_string(index) + "]";
  if (!item.is_object()) return Malformed(where, "an object");
  auto metric = item.find("metric");
  if (metric == item.end() || !metric->is_object()) {
    return Malformed(where + ".metric", "an object");
  }
  Sample sample;
  for (const auto& [name, value] : metric->items()) {
    if (!value.is_string()) return Malformed(where + ".metric." + base::Excerpt(name), "a string");
    sample.labels[name] = value.get<std::string>();
  }
  auto value = item.find("value");
  std::optional<double> parsed = value == item.end() ? std::nullopt : ParseValue(*value);
  if (!parsed) return Malformed(where + ".value", "[unix time, \"number\"]");
  sample.value = *parsed;
  return sample;
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
                               std::to_string(status) + ": " + base::Excerpt(*body, 200));
  }
  Result<std::vector<Sample>> samples = ParseQueryResponse(*body);
  if (!samples.ok()) return samples.status().Context(options_.server + " at " + options_.url);
  return samples;
}

Result<std::string> PromClient::Get(const std::string& path, std::string* not_found) const {
  long status = 0;
  Result<std::string> body = Fetch(options_.url + path, &status);
  if (!body.ok()) return body.status();
  if (status != 200) {
    std::string first = body->substr(0, body->find('\n'));
    std::string message = options_.server + " at " + options_.url + " answered HTTP " +
                          std::to_string(status) + " for " + path + ": " +
                          base::Excerpt(first, 200);
    // 404: the server has no such thing (an agent's "no GPU matches id"); the rest: it failed.
    if (status == 404 && not_found != nullptr) {
      *not_found = base::TerminalText(std::string_view(first).substr(0, 200));
    }
    return status == 404 ? Status::NotFound(std::move(message))
                         : Status::Unavailable(std::move(message));
  }
  return body;
}

Result<std::vector<Sample>> ParseQueryResponse(const std::string& body) {
  // An answer nests 5 deep ({"data": {"result": [{"value": [...]}]}}).
  if (std::string problem = base::JsonShapeProblem(body, kMaxJsonDepth, kMaxJsonValues);
      !problem.empty()) {
    return Status::InvalidArgument("Prometheus answer " + problem + ": refused");
  }
  const json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !doc.is_object()) {
    return Status::InvalidArgument("Prometheus answer is not JSON: " + base::Excerpt(body, 200));
  }
  auto status = doc.find("status");
  if (status == doc.end() || !status->is_string()) return Malformed("status", "a string");
  if (*status != "success") {
    auto error = doc.find("error");
    return Status::InvalidArgument("Prometheus query failed: " +
                                   base::Excerpt(error != doc.end() && error->is_string()
                                                     ? error->get<std::string>()
                                                     : status->get<std::string>(),
                                                 200));
  }
  auto data = doc.find("data");
  if (data == doc.end() || !data->is_object()) return Malformed("data", "an object");
  auto type = data->find("resultType");
  if (type == data->end() || !type->is_string()) return Malformed("data.resultType", "a string");
  if (*type != "vector") {
    return Status::InvalidArgument("Prometheus answered a " +
                                   base::Excerpt(type->get<std::string>()) + ", not a vector");
  }
  auto result = data->find("result");
  if (result == data->end() || !result->is_array()) return Malformed("data.result", "an array");
  std::vector<Sample> out;
  out.reserve(result->size());
  for (std::size_t i = 0; i < result->size(); ++i) {
    Result<Sample> sample = ParseSample((*result)[i], i);
    if (!sample.ok()) return sample.status();
    out.push_back(std::move(*sample));
  }
  return out;
}

}  // namespace gpuscope::baseline
