#include "remediate/kubernetes.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/module.h"
#include "baseline/http_fetch.h"
#include "remediate/slurm.h"

namespace gpuscope::remediate {
namespace {

using nlohmann::json;

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

Result<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::Unavailable("cannot read " + path);
  std::ostringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string Rfc3339Now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

// "xid_79/GPU-..." -> "GpuscopeXid79" (a CamelCase condition reason).
std::string ConditionReason(const Decision& d) {
  std::string out = "Gpuscope";
  const std::string finding = d.keys.empty() ? "fault" : d.keys[0].substr(0, d.keys[0].find('/'));
  bool upper = true;
  for (char c : finding) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return out;
}

// The node's GpuHealthy condition, null when it has none. json's value()
// throws on a field of another type: callers catch json::exception.
const json* Condition(const json& node) {
  if (!node.contains("status") || !node["status"].contains("conditions")) return nullptr;
  for (const json& c : node["status"]["conditions"]) {
    if (c.is_object() && c.value("type", "") == kConditionType) return &c;
  }
  return nullptr;
}

// The message of an API server's Status answer ("" when there is none).
std::string StatusMessage(const std::string& body) {
  json j = json::parse(body, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("message")) return "";
  return j["message"].is_string() ? j["message"].get<std::string>() : j["message"].dump();
}

// Adds the nodes of a NodeList's items to `v`, and reads `node`'s own.
void CountNodes(const json& items, std::string_view node, NodeView& v,
                std::string* resource_version, std::string* taints) {
  for (const json& n : items) {
    ++v.nodes;
    const json* c = Condition(n);
    const bool unhealthy = c && c->value("status", "") == "False";
    const std::string message = c ? c->value("message", "") : "";
    if (unhealthy && IsOurReason(message)) ++v.drained_by_us;
    const json& meta = n.contains("metadata") ? n["metadata"] : json::object();
    if (meta.value("name", "") != node) continue;
    v.found = true;
    v.drained = unhealthy;
    v.reason = unhealthy ? message : "";
    if (meta.contains("labels") && meta["labels"].is_object()) {
      v.opted_out = meta["labels"].value(std::string(kOptOutLabel), "") == "false";
    }
    *resource_version = meta.value("resourceVersion", "");
    const bool has_taints = n.contains("spec") && n["spec"].contains("taints");
    *taints = has_taints ? n["spec"]["taints"].dump() : "[]";
  }
}

}  // namespace

NodeView ParseNodeList(std::string_view text, std::string_view node, std::string* resource_version,
                       std::string* taints) {
  NodeView v;
  json list = json::parse(text, nullptr, false);
  if (list.is_discarded() || !list.contains("items") || !list["items"].is_array()) {
    v.error = "the API server's node list is not a NodeList";
    return v;
  }
  try {
    CountNodes(list["items"], node, v, resource_version, taints);
  } catch (const json::exception& e) {
    v = {};
    v.error = std::string("the API server's node list: ") + e.what();
  }
  return v;
}

std::string ConditionPatch(bool healthy, std::string_view reason, std::string_view message,
                           std::string_view now) {
  json condition = {{"type", kConditionType},   {"status", healthy ? "True" : "False"},
                    {"reason", reason},         {"message", message},
                    {"lastHeartbeatTime", now}, {"lastTransitionTime", now}};
  return json{{"status", {{"conditions", json::array({condition})}}}}.dump();
}

std::string TaintPatch(std::string_view taints, bool add, std::string_view resource_version) {
  json list = json::parse(taints, nullptr, false);
  if (!list.is_array()) list = json::array();
  json kept = json::array();
  for (const json& t : list) {
    const bool ours = t.is_object() && t.contains("key") && t["key"] == std::string(kTaintKey);
    if (!ours) kept.push_back(t);
  }
  if (add) kept.push_back({{"key", kTaintKey}, {"value", "true"}, {"effect", "NoSchedule"}});
  json patch = json::array();
  patch.push_back(
      {{"op", "test"}, {"path", "/metadata/resourceVersion"}, {"value", resource_version}});
  patch.push_back({{"op", "add"}, {"path", "/spec/taints"}, {"value", kept}});
  return patch.dump();
}

KubernetesActuator::KubernetesActuator(KubernetesOptions options) : options_(std::move(options)) {
  if (options_.node.empty()) options_.node = Env("NODE_NAME");
  if (options_.node.empty()) options_.node = ShortHostname();
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

Result<std::string> KubernetesActuator::Call(const std::string& method, const std::string& path,
                                             const std::string& content_type,
                                             const std::string& body) {
  if (options_.api_server.empty()) {
    return Status::Unavailable("no API server: KUBERNETES_SERVICE_HOST is not set (not in a pod?)");
  }
  const auto& fetcher =
      ModuleTable(baseline::kCurlModule, "gpuscope_http_fetcher", gpuscope_http_fetcher);
  if (!fetcher.ok()) return fetcher.status();
  Result<std::string> token = ReadFile(options_.serviceaccount_dir + "/token");
  if (!token.ok()) return token.status().Context("service-account token");
  baseline::HttpRequest request;
  request.method = method;
  request.url = options_.api_server + path;
  request.headers = {"Authorization: Bearer " + *token, "Accept: application/json"};
  if (!content_type.empty()) request.headers.push_back("Content-Type: " + content_type);
  request.body = body;
  request.ca_file = options_.serviceaccount_dir + "/ca.crt";
  request.timeout_s = options_.timeout_s;
  long status = 0;
  Result<std::string> answer = (*fetcher)->send(request, &status);
  if (!answer.ok()) return answer.status();
  if (status < 200 || status >= 300) {
    const std::string message = StatusMessage(*answer);
    return Status::Unavailable(fmt::format("{} {}: HTTP {}{}{}", method, path, status,
                                           message.empty() ? "" : ": ", message));
  }
  return answer;
}

NodeView KubernetesActuator::Read() {
  Result<std::string> list = Call("GET", "/api/v1/nodes", "", "");
  NodeView v;
  if (!list.ok()) {
    v.error = list.status().message();
    return v;
  }
  v = ParseNodeList(*list, options_.node, &resource_version_, &taints_);
  if (v.error.empty() && !v.found) {
    v.error = fmt::format("node '{}' is not in the API server's node list", options_.node);
  }
  return v;
}

Status KubernetesActuator::SetCondition(bool healthy, const std::string& reason,
                                        const std::string& message) {
  Result<std::string> done = Call("PATCH", "/api/v1/nodes/" + options_.node + "/status",
                                  "application/strategic-merge-patch+json",
                                  ConditionPatch(healthy, reason, message, Rfc3339Now()));
  if (!done.ok()) return done.status();
  // The answer is the node: its new resourceVersion is what the taint patch tests.
  json node = json::parse(*done, nullptr, false);
  const bool has_version = !node.is_discarded() && node.contains("metadata") &&
                           node["metadata"].contains("resourceVersion") &&
                           node["metadata"]["resourceVersion"].is_string();
  if (has_version) {
    resource_version_ = node["metadata"]["resourceVersion"].get<std::string>();
    const bool has_taints = node.contains("spec") && node["spec"].contains("taints");
    if (has_taints) taints_ = node["spec"]["taints"].dump();
  }
  return Status::Ok();
}

Status KubernetesActuator::SetTaint(bool add) {
  if (!options_.taint) return Status::Ok();
  Result<std::string> done =
      Call("PATCH", "/api/v1/nodes/" + options_.node, "application/json-patch+json",
           TaintPatch(taints_, add, resource_version_));
  return done.ok() ? Status::Ok() : done.status();
}

Result<DrainResult> KubernetesActuator::Drain(const Decision& d) {
  GPUSCOPE_RETURN_IF_ERROR(SetCondition(false, ConditionReason(d), d.reason));
  GPUSCOPE_RETURN_IF_ERROR(SetTaint(true));
  return DrainResult::kDrained;
}

Status KubernetesActuator::Resume() {
  GPUSCOPE_RETURN_IF_ERROR(
      SetCondition(true, "GpuscopeHealthy", "gpuscope: the GPUs are healthy again"));
  return SetTaint(false);
}

}  // namespace gpuscope::remediate
