#include "baseline/kube_api.h"

#include <fmt/format.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/module.h"
#include "baseline/http_fetch.h"

namespace gpuscope::baseline {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

KubeApi::KubeApi(KubeApiOptions options) : options_(std::move(options)) {
  if (options_.api_server.empty()) {
    const std::string host = Env("KUBERNETES_SERVICE_HOST");
    const std::string port = Env("KUBERNETES_SERVICE_PORT");
    if (!host.empty()) {
      const bool v6 = host.find(':') != std::string::npos;
      options_.api_server = fmt::format("https://{}{}{}:{}", v6 ? "[" : "", host, v6 ? "]" : "",
                                        port.empty() ? "443" : port);
    }
  }
}

Result<std::string> KubeApi::ReadAccountFile(const std::string& name) const {
  const std::string path = options_.serviceaccount_dir + "/" + name;
  std::ifstream in(path);
  if (!in) return Status::Unavailable("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

Result<KubeApi::Answer> KubeApi::Send(const std::string& method, const std::string& path,
                                      const std::string& content_type,
                                      const std::string& body) const {
  if (options_.api_server.empty()) {
    return Status::Unavailable("no API server: KUBERNETES_SERVICE_HOST is not set (not in a pod?)");
  }
  const auto& fetcher = ModuleTable(kCurlModule, "gpuscope_http_fetcher", gpuscope_http_fetcher);
  if (!fetcher.ok()) return fetcher.status();
  Result<std::string> token = ReadAccountFile("token");
  if (!token.ok()) return token.status().Context("service-account token");
  HttpRequest request;
  request.method = method;
  request.url = options_.api_server + path;
  request.headers = {"Authorization: Bearer " + *token, "Accept: application/json"};
  if (!content_type.empty()) request.headers.push_back("Content-Type: " + content_type);
  request.body = body;
  request.ca_file = options_.serviceaccount_dir + "/ca.crt";
  request.timeout_s = options_.timeout_s;
  Answer answer;
  Result<std::string> text = (*fetcher)->send(request, &answer.status);
  if (!text.ok()) return text.status();
  answer.body = std::move(*text);
  return answer;
}

Result<std::string> KubeApi::Call(const std::string& method, const std::string& path,
                                  const std::string& content_type, const std::string& body) const {
  Result<Answer> answer = Send(method, path, content_type, body);
  if (!answer.ok()) return answer.status();
  if (answer->status < 200 || answer->status >= 300) {
    return KubeHttpError(method, path, answer->status, answer->body);
  }
  return std::move(answer->body);
}

std::string KubeQueryValue(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string KubeStatusMessage(const std::string& body) {
  nlohmann::json j = nlohmann::json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return "";
  return j["message"].is_string() ? j["message"].get<std::string>() : j["message"].dump();
}

Status KubeHttpError(const std::string& method, const std::string& path, long status,
                     const std::string& body) {
  const std::string message = KubeStatusMessage(body);
  return Status::Unavailable(fmt::format("{} {}: HTTP {}{}{}", method, path, status,
                                         message.empty() ? "" : ": ", message));
}

}  // namespace gpuscope::baseline
