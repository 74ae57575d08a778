#include "remediate/kubernetes.h"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "base/log.h"
#include "base/module.h"
#include "baseline/kube_api.h"
#include "remediate/slurm.h"

namespace gpuscope::remediate {
namespace {

using nlohmann::json;

// Lease writes per claim or release: each 409 means another agent's write
// went first, and there are at most a few of those before the slots are full.
constexpr int kLeaseTries = 16;
// Pages of the node list at most (5 million nodes at 500 a page).
constexpr int kMaxPages = 10000;

std::string Rfc3339Now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

int64_t NowS() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

void Pause(double seconds) { std::this_thread::sleep_for(std::chrono::duration<double>(seconds)); }

// A short random pause after a 409, so racing agents do not retry in step.
void PauseAfterConflict(int attempt) {
  thread_local std::minstd_rand rng{std::random_device{}()};
  std::uniform_real_distribution<double> ms(5, 25.0 * std::min(attempt, 4));
  Pause(ms(rng) / 1000);
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

bool Success(long status) { return status >= 200 && status < 300; }

using baseline::KubeHttpError;
using baseline::KubeQueryValue;

}  // namespace

KubernetesActuator::KubernetesActuator(KubernetesOptions options)
    : options_(std::move(options)),
      api_({options_.api_server, options_.serviceaccount_dir, options_.timeout_s}) {
  const char* node = std::getenv("NODE_NAME");
  if (options_.node.empty() && node) options_.node = node;
  if (options_.node.empty()) options_.node = ShortHostname();
  options_.api_server = api_.options().api_server;
  node_path_ = "/api/v1/nodes/" + KubeQueryValue(options_.node);
  options_.page_size = std::max(options_.page_size, 1);
  options_.taint_tries = std::max(options_.taint_tries, 1);
}

Result<KubernetesActuator::Answer> KubernetesActuator::Send(const std::string& method,
                                                            const std::string& path,
                                                            const std::string& content_type,
                                                            const std::string& body) {
  return api_.Send(method, path, content_type, body);
}

Result<std::string> KubernetesActuator::Call(const std::string& method, const std::string& path,
                                             const std::string& content_type,
                                             const std::string& body) {
  Result<Answer> answer = Send(method, path, content_type, body);
  if (!answer.ok()) return answer.status();
  if (!Success(answer->status)) return KubeHttpError(method, path, answer->status, answer->body);
  return std::move(answer->body);
}

Result<NodeFacts> KubernetesActuator::GetNode() {
  Result<std::string> body = Call("GET", node_path_, "", "");
  if (!body.ok()) return body.status();
  NodeFacts f = ParseNode(*body, options_.taint);
  if (!f.view.error.empty()) return Status::Unavailable(f.view.error + " (GET " + node_path_ + ")");
  return f;
}

NodeView KubernetesActuator::Read() {
  NodeView failed;
  Result<NodeFacts> node = GetNode();
  if (!node.ok()) {
    failed.error = node.status().message();
    return failed;
  }
  node_ = std::move(*node);
  Result<LeasePaths> at = Lease();
  Result<BreakerLease> lease = at.ok() ? GetLease(*at, false) : Result<BreakerLease>(at.status());
  if (!lease.ok()) {
    failed.error = lease.status().message();
    return failed;
  }
  NodeView v = node_.view;
  Sighting seen;
  for (const auto& [holder, claimed] : lease->holders) seen.holders.insert(holder);
  if (Status counted = CountNodes(v, seen); !counted.ok()) {
    failed.error = counted.message();
    return failed;
  }
  seen_ = std::move(seen);
  read_lease_ = *lease;
  const bool ours = v.drained && IsOurReason(v.reason);
  v.drained_by_us = OtherHolders(lease->holders, options_.node, seen_, NowS()) + (ours ? 1 : 0);
  return v;
}

Status KubernetesActuator::CountNodes(NodeView& v, Sighting& seen) {
  std::string next;
  for (int page = 0; page < kMaxPages; ++page) {
    std::string path = fmt::format("/api/v1/nodes?limit={}", options_.page_size);
    if (!next.empty()) path += "&continue=" + KubeQueryValue(next);
    Result<std::string> body = Call("GET", path, "", "");
    if (!body.ok()) return body.status();
    NodePage p = ParseNodePage(*body);
    if (!p.error.empty()) return Status::Unavailable(fmt::format("{} (GET {})", p.error, path));
    v.nodes += p.nodes;
    for (std::string& name : p.drained_by_us) seen.drained_by_us.insert(std::move(name));
    if (p.next.empty()) return Status::Ok();
    if (p.next == next) return Status::Unavailable("GET " + path + ": the same continue again");
    next = std::move(p.next);
  }
  return Status::Unavailable(fmt::format("the node list has more than {} pages", kMaxPages));
}

Result<KubernetesActuator::LeasePaths> KubernetesActuator::Lease() {
  const std::string file = options_.serviceaccount_dir + "/namespace";
  Result<std::string> ns = api_.ReadAccountFile("namespace");
  if (!ns.ok()) return ns.status().Context("the breaker's Lease: the service account's namespace");
  if (ns->empty() ||
      ns->find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    return Status::InvalidArgument(fmt::format("{}: '{}' is not a namespace name", file, *ns));
  }
  LeasePaths paths;
  paths.ns = *ns;
  paths.list = fmt::format("/apis/coordination.k8s.io/v1/namespaces/{}/leases", *ns);
  paths.lease = paths.list + "/" + options_.lease_name;
  return paths;
}

Result<BreakerLease> KubernetesActuator::GetLease(const LeasePaths& at, bool create) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    Result<Answer> got = Send("GET", at.lease, "", "");
    if (!got.ok()) return got.status();
    if (Success(got->status)) return ParseLease(got->body);
    if (got->status != 404) return KubeHttpError("GET", at.lease, got->status, got->body);
    if (!create) return BreakerLease{};  // none yet: nobody holds a slot
    Result<Answer> made =
        Send("POST", at.list, "application/json", NewLease(options_.lease_name, at.ns));
    if (!made.ok()) return made.status();
    if (Success(made->status)) return ParseLease(made->body);
    // 409 AlreadyExists: another agent created it first; read theirs.
    if (made->status != 409) return KubeHttpError("POST", at.list, made->status, made->body);
  }
  return Status::Unavailable("GET " + at.lease + ": 404 after the POST's 409 AlreadyExists");
}

Result<bool> KubernetesActuator::ClaimSlot(int limit) {
  Result<LeasePaths> at = Lease();
  if (!at.ok()) return at.status();
  for (int attempt = 1; attempt <= kLeaseTries; ++attempt) {
    // The Lease as Read saw it first: if it moved since, the PUT gets 409.
    const bool fresh = attempt > 1 || read_lease_.object.empty();
    Result<BreakerLease> lease = fresh ? GetLease(*at, true) : Result<BreakerLease>(read_lease_);
    if (!lease.ok()) return lease.status();
    std::optional<Holders> next = PlanClaim(lease->holders, options_.node, limit, seen_, NowS());
    if (!next) return false;
    Result<Answer> put =
        Send("PUT", at->lease, "application/json", LeaseWithHolders(*lease, *next));
    if (!put.ok()) return put.status();
    if (Success(put->status)) return true;
    if (put->status != 409) return KubeHttpError("PUT", at->lease, put->status, put->body);
    PauseAfterConflict(attempt);  // 409 Conflict: another agent wrote first
  }
  return Status::Unavailable(
      fmt::format("the breaker's Lease changed under this agent {} times in a row", kLeaseTries));
}

Status KubernetesActuator::ReleaseSlot() {
  Result<LeasePaths> at = Lease();
  if (!at.ok()) return at.status();
  for (int attempt = 1; attempt <= kLeaseTries; ++attempt) {
    Result<BreakerLease> lease = GetLease(*at, false);
    if (!lease.ok()) return lease.status();
    if (!lease->holders.contains(options_.node)) return Status::Ok();
    const Holders next = PlanRelease(lease->holders, options_.node, seen_, NowS());
    Result<Answer> put = Send("PUT", at->lease, "application/json", LeaseWithHolders(*lease, next));
    if (!put.ok()) return put.status();
    if (Success(put->status)) return Status::Ok();
    if (put->status != 409) return KubeHttpError("PUT", at->lease, put->status, put->body);
    PauseAfterConflict(attempt);
  }
  return Status::Unavailable(
      fmt::format("the breaker's Lease changed under this agent {} times in a row", kLeaseTries));
}

Status KubernetesActuator::SetCondition(bool healthy, const std::string& reason,
                                        const std::string& message) {
  Result<std::string> done =
      Call("PATCH", node_path_ + "/status", "application/strategic-merge-patch+json",
           ConditionPatch(healthy, reason, message, Rfc3339Now()));
  if (!done.ok()) return done.status();
  // The answer is the node: its new resourceVersion is what the taint patch tests.
  NodeFacts node = ParseNode(*done, options_.taint);
  if (node.view.error.empty()) node_ = std::move(node);
  return Status::Ok();
}

Status KubernetesActuator::SetTaint(bool add) {
  if (add && !options_.taint) return Status::Ok();
  const char* what = add ? "adding" : "removing";
  Status last = Status::Ok();
  double backoff = options_.taint_backoff_s;
  for (int attempt = 1; attempt <= options_.taint_tries; ++attempt) {
    if (attempt > 1) {
      Pause(backoff);
      backoff = std::min(backoff * 2, options_.taint_backoff_max_s);
      Result<NodeFacts> fresh = GetNode();  // its resourceVersion and taints now
      if (!fresh.ok()) {
        last = fresh.status();
        log::Warn("kubernetes: {} the taint {} on node {}: try {} of {} failed: {}", what,
                  kTaintKey, options_.node, attempt, options_.taint_tries, last.message());
        continue;
      }
      node_ = std::move(*fresh);
    }
    if (node_.our_taint == add) return Status::Ok();
    Result<std::string> done = Call("PATCH", node_path_, "application/json-patch+json",
                                    TaintPatch(node_.taints, add, node_.resource_version));
    if (done.ok()) {
      NodeFacts node = ParseNode(*done, options_.taint);
      if (node.view.error.empty()) node_ = std::move(node);
      return Status::Ok();
    }
    last = done.status();
    log::Warn("kubernetes: {} the taint {} on node {}: try {} of {} failed: {}", what, kTaintKey,
              options_.node, attempt, options_.taint_tries, last.message());
  }
  return last.Context(
      fmt::format("{} the taint {} ({} tries)", what, kTaintKey, options_.taint_tries));
}

Result<DrainResult> KubernetesActuator::Drain(const Decision& d) {
  Result<bool> slot = ClaimSlot(d.breaker_limit);
  if (!slot.ok()) return slot.status().Context("circuit breaker");
  if (!*slot) return DrainResult::kBreakerOpen;
  const bool was_ours = node_.our_condition;
  Status done = SetCondition(false, ConditionReason(d), d.reason);
  const bool marked = done.ok();
  if (done.ok()) done = SetTaint(true);
  if (done.ok()) return DrainResult::kDrained;
  if (was_ours) return done;  // our condition stood before: it stays, and so does the slot
  // Never left half drained: the condition and the slot are taken back, and
  // the policy retries the whole drain.
  Status undone = Status::Ok();
  if (marked) {
    undone = SetCondition(true, "GpuscopeDrainUndone",
                          "gpuscope: the drain was taken back: " + done.message());
  }
  if (undone.ok()) undone = ReleaseSlot();
  if (!undone.ok()) {
    log::Warn("kubernetes: taking back the drain of {}: {}", options_.node, undone.message());
  }
  return done;
}

Status KubernetesActuator::Resume() {
  if (node_.our_condition) {
    GPUSCOPE_RETURN_IF_ERROR(
        SetCondition(true, "GpuscopeHealthy", "gpuscope: the GPUs are healthy again"));
  }
  GPUSCOPE_RETURN_IF_ERROR(SetTaint(false));
  // The node is back: give the slot up. If that fails, the slot is stale
  // (no condition of ours) and the next agent that claims one drops it.
  if (Status released = ReleaseSlot(); !released.ok()) {
    log::Warn("kubernetes: giving back {}'s slot in the breaker's Lease: {}", options_.node,
              released.message());
  }
  return Status::Ok();
}

}  // namespace gpuscope::remediate
