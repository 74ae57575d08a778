#include "remediate/kubernetes_objects.h"

#include <fmt/format.h>

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

namespace gpuscope::remediate {
namespace {

using nlohmann::json;

// A field of the wrong type, thrown inside this file's parsers only and
// caught by each of them: it never leaves them.
struct FieldError {
  std::string what;
};

const char* TypeName(json::value_t type) {
  switch (type) {
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return "a string";
    case json::value_t::boolean:
      return "a boolean";
    default:
      return "a number";
  }
}

// `object[key]` when present and of `type`; nullptr when absent or null.
const json* Field(const json& object, std::string_view key, json::value_t type,
                  std::string_view path) {
  if (!object.is_object()) throw FieldError{fmt::format("{} is not in an object", path)};
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return nullptr;
  if (it->type() != type) {
    throw FieldError{fmt::format("{} is {}, not {}", path, it->type_name(), TypeName(type))};
  }
  return &*it;
}

std::string Text(const json& object, std::string_view key, std::string_view path) {
  const json* s = Field(object, key, json::value_t::string, path);
  return s ? s->get<std::string>() : "";
}

bool Flag(const json& object, std::string_view key, std::string_view path) {
  const json* b = Field(object, key, json::value_t::boolean, path);
  return b && b->get<bool>();
}

const json& Empty(json::value_t type) {
  static const json object = json::object(), array = json::array();
  return type == json::value_t::array ? array : object;
}

const json& Child(const json& object, std::string_view key, json::value_t type,
                  std::string_view path) {
  const json* c = Field(object, key, type, path);
  return c ? *c : Empty(type);
}

struct Condition {
  bool present = false;
  std::string status, message;
};

// The node's GpuHealthy condition.
Condition GpuCondition(const json& node) {
  const json& status = Child(node, "status", json::value_t::object, "status");
  Condition out;
  for (const json& c : Child(status, "conditions", json::value_t::array, "status.conditions")) {
    if (!c.is_object()) throw FieldError{"status.conditions holds a " + std::string(c.type_name())};
    if (Text(c, "type", "status.conditions[].type") != kConditionType) continue;
    out.present = true;
    out.status = Text(c, "status", "status.conditions[GpuHealthy].status");
    out.message = Text(c, "message", "status.conditions[GpuHealthy].message");
  }
  return out;
}

bool OursFalse(const Condition& c) { return c.status == "False" && IsOurReason(c.message); }

// The node controller's own taints, mirrored from the node's conditions.
bool ControllerTaint(std::string_view key) {
  return key.starts_with("node.kubernetes.io/") && key != "node.kubernetes.io/unschedulable" &&
         key != "node.kubernetes.io/out-of-service";
}

// A person's (or a controller's) word that the node is out of service, "" when none.
std::string OutOfServiceMark(const json& spec, bool* our_taint) {
  std::string mark;
  if (Flag(spec, "unschedulable", "spec.unschedulable")) {
    mark = "cordoned (spec.unschedulable is true), not by gpuscope";
  }
  for (const json& t : Child(spec, "taints", json::value_t::array, "spec.taints")) {
    if (!t.is_object()) throw FieldError{"spec.taints holds a " + std::string(t.type_name())};
    const std::string key = Text(t, "key", "spec.taints[].key");
    const std::string value = Text(t, "value", "spec.taints[].value");
    const std::string effect = Text(t, "effect", "spec.taints[].effect");
    if (key == kTaintKey) {
      *our_taint = true;
      continue;
    }
    const bool out_of_service =
        key == "node.kubernetes.io/unschedulable" || key == "node.kubernetes.io/out-of-service" ||
        key == "ToBeDeletedByClusterAutoscaler" || (effect == "NoExecute" && !ControllerTaint(key));
    if (out_of_service && mark.empty()) {
      mark = fmt::format("tainted {}{}{}:{}, not by gpuscope", key, value.empty() ? "" : "=", value,
                         effect);
    }
  }
  return mark;
}

void ReadNode(const json& node, bool taint_mode, NodeFacts& f) {
  const json& meta = Child(node, "metadata", json::value_t::object, "metadata");
  f.resource_version = Text(meta, "resourceVersion", "metadata.resourceVersion");
  const json& labels = Child(meta, "labels", json::value_t::object, "metadata.labels");
  f.view.opted_out =
      Text(labels, kOptOutLabel, "metadata.labels[gpuscope.io/remediate]") == "false";
  const json& spec = Child(node, "spec", json::value_t::object, "spec");
  f.taints = Child(spec, "taints", json::value_t::array, "spec.taints").dump();
  const std::string mark = OutOfServiceMark(spec, &f.our_taint);
  const Condition c = GpuCondition(node);
  f.our_condition = OursFalse(c);
  f.view.found = true;
  if (f.our_condition) {
    // Ours whatever a person added since; half done without our taint.
    f.view.drained = !taint_mode || f.our_taint || !mark.empty();
    f.view.reason = c.message;
  } else if (c.status == "False") {
    f.view.drained = true;
    f.view.reason = c.message.empty() ? "GpuHealthy=False, not by gpuscope" : c.message;
  } else if (f.our_taint) {
    f.view.drained = true;
    f.view.reason = fmt::format("{} the taint {} is left from a resume", kReasonPrefix, kTaintKey);
  } else if (!mark.empty()) {
    f.view.drained = true;
    f.view.reason = mark;
  }
}

// Keeps, of a NodeList page, only what ParseNodePage reads: the list's kind and
// metadata.continue, and each node's name and conditions' type, status and message.
bool KeepPageField(int depth, json::parse_event_t event, json& parsed) {
  if (event != json::parse_event_t::key) return true;
  const std::string& key = parsed.get_ref<const std::string&>();
  switch (depth) {
    case 1:
      return key == "kind" || key == "metadata" || key == "items";
    case 2:
      return key == "continue";
    case 3:
      return key == "metadata" || key == "status";
    case 4:
      return key == "name" || key == "conditions";
    case 6:
      return key == "type" || key == "status" || key == "message";
    default:
      return false;
  }
}

}  // namespace

NodeFacts ParseNode(std::string_view text, bool taint_mode) {
  NodeFacts f;
  json node = json::parse(text, nullptr, false);
  if (node.is_discarded() || !node.is_object()) {
    f.view.error = "the API server's answer is not a Node (not a JSON object)";
    return f;
  }
  try {
    ReadNode(node, taint_mode, f);
  } catch (const FieldError& e) {
    f = {};
    f.view.error = "the API server's Node: " + e.what;
  }
  return f;
}

NodePage ParseNodePage(std::string_view text) {
  NodePage page;
  json list = json::parse(text, KeepPageField, false);
  if (list.is_discarded() || !list.is_object()) {
    page.error = "the API server's node list is not JSON";
    return page;
  }
  try {
    if (Text(list, "kind", "kind") != "NodeList") throw FieldError{"kind is not NodeList"};
    const json& meta = Child(list, "metadata", json::value_t::object, "metadata");
    page.next = Text(meta, "continue", "metadata.continue");
    const json* items = Field(list, "items", json::value_t::array, "items");
    if (!items) throw FieldError{"items is missing"};
    for (const json& n : *items) {
      if (!n.is_object()) throw FieldError{"items holds a " + std::string(n.type_name())};
      ++page.nodes;
      const std::string name = Text(Child(n, "metadata", json::value_t::object, "items[].metadata"),
                                    "name", "items[].metadata.name");
      if (OursFalse(GpuCondition(n))) page.drained_by_us.push_back(name);
    }
  } catch (const FieldError& e) {
    page = {};
    page.error = "the API server's node list: " + e.what;
  }
  return page;
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

std::string FormatTime(int64_t unix_s) {
  const std::time_t t = static_cast<std::time_t>(unix_s);
  std::tm tm{};
  gmtime_r(&t, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

namespace {

// "2026-12-04T08:00:00Z" -> Unix seconds; nullopt for anything else.
std::optional<int64_t> ParseTime(const std::string& text) {
  std::tm tm{};
  char z = 0;
  int n = 0;
  const int got = std::sscanf(text.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%n", &tm.tm_year, &tm.tm_mon,
                              &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec, &z, &n);
  if (got != 7 || z != 'Z' || static_cast<std::size_t>(n) != text.size()) return std::nullopt;
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t t = timegm(&tm);
  if (t == -1 || FormatTime(t) != text) return std::nullopt;  // 2026-02-31 and the like
  return static_cast<int64_t>(t);
}

Holders ReadHolders(const json& lease) {
  const json& meta = Child(lease, "metadata", json::value_t::object, "metadata");
  if (Text(meta, "resourceVersion", "metadata.resourceVersion").empty()) {
    throw FieldError{"metadata.resourceVersion is missing"};
  }
  const json& notes = Child(meta, "annotations", json::value_t::object, "metadata.annotations");
  const std::string path = fmt::format("metadata.annotations[{}]", kHoldersAnnotation);
  const std::string text = Text(notes, kHoldersAnnotation, path);
  Holders holders;
  if (text.empty()) return holders;
  json list = json::parse(text, nullptr, false);
  if (list.is_discarded() || !list.is_object()) {
    throw FieldError{path + " is not a JSON object of node: claim time"};
  }
  for (const auto& [node, claimed] : list.items()) {
    std::optional<int64_t> t =
        claimed.is_string() ? ParseTime(claimed.get<std::string>()) : std::nullopt;
    if (!t || node.empty()) {
      throw FieldError{
          fmt::format("{}: node '{}' has the claim time {}, not a time like "
                      "\"2026-12-04T08:00:00Z\"",
                      path, node, claimed.dump())};
    }
    holders[node] = *t;
  }
  return holders;
}

}  // namespace

Result<BreakerLease> ParseLease(std::string_view text) {
  json lease = json::parse(text, nullptr, false);
  if (lease.is_discarded() || !lease.is_object()) {
    return Status::Unavailable("the breaker's Lease is not a JSON object");
  }
  try {
    BreakerLease out;
    out.holders = ReadHolders(lease);
    out.object = lease.dump();
    return out;
  } catch (const FieldError& e) {
    return Status::Unavailable("the breaker's Lease: " + e.what);
  }
}

std::string NewLease(std::string_view name, std::string_view ns) {
  json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata",
                 {{"name", name},
                  {"namespace", ns},
                  {"labels", {{"app.kubernetes.io/name", "gpuscope"}}},
                  {"annotations", {{kHoldersAnnotation, "{}"}}}}},
                {"spec", json::object()}};
  return lease.dump();
}

std::string LeaseWithHolders(const BreakerLease& lease, const Holders& holders) {
  json object = json::parse(lease.object);  // ParseLease's own dump: valid
  json list = json::object();
  for (const auto& [node, claimed] : holders) list[node] = FormatTime(claimed);
  object["metadata"]["annotations"][std::string(kHoldersAnnotation)] = list.dump();
  return object.dump();
}

bool StillHolds(const std::string& node, int64_t claimed, const Sighting& seen, int64_t now) {
  return now - claimed < kClaimGraceS || !seen.holders.contains(node) ||
         seen.drained_by_us.contains(node);
}

namespace {

// The holders that still hold, and the nodes drained by us adopted.
Holders Live(const Holders& current, const Sighting& seen, int64_t now) {
  Holders live;
  for (const auto& [node, claimed] : current) {
    if (StillHolds(node, claimed, seen, now)) live[node] = claimed;
  }
  for (const std::string& node : seen.drained_by_us) live.emplace(node, now);
  return live;
}

}  // namespace

std::optional<Holders> PlanClaim(const Holders& current, const std::string& node, int limit,
                                 const Sighting& seen, int64_t now) {
  Holders live = Live(current, seen, now);
  const bool held = current.contains(node);
  live.erase(node);
  if (!held && static_cast<int>(live.size()) >= limit) return std::nullopt;
  live[node] = now;
  return live;
}

Holders PlanRelease(const Holders& current, const std::string& node, const Sighting& seen,
                    int64_t now) {
  Holders live;
  for (const auto& [name, claimed] : current) {
    if (name != node && StillHolds(name, claimed, seen, now)) live[name] = claimed;
  }
  return live;
}

int OtherHolders(const Holders& current, const std::string& node, const Sighting& seen,
                 int64_t now) {
  Holders live = Live(current, seen, now);
  live.erase(node);
  return static_cast<int>(live.size());
}

}  // namespace gpuscope::remediate
