// The Kubernetes actuator's pure parts (remediate/kubernetes_objects.h): the
// node, the pages of the node list, the PATCH bodies and the breaker's Lease.
// The requests themselves are checked against a fake API server in
// tests/integration/test_remediate_kubernetes.py.
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "remediate/kubernetes_objects.h"

namespace gpuscope::remediate {
namespace {

using nlohmann::json;

constexpr char kOurs[] = R"({"type":"GpuHealthy","status":"False",
  "message":"gpuscope: XID 79 on GPU 3 (GPU-3) u"})";
constexpr char kOurTaint[] =
    R"({"key":"gpuscope.io/gpu-unhealthy","value":"true","effect":"NoSchedule"})";

// A Node with `spec` and `conditions` (JSON text).
std::string Node(const std::string& spec, const std::string& conditions,
                 const std::string& labels = "{}") {
  return R"({"kind":"Node","metadata":{"name":"a","resourceVersion":"41","labels":)" + labels +
         R"(},"spec":)" + spec + R"(,"status":{"conditions":[{"type":"Ready","status":"True"})" +
         (conditions.empty() ? "" : "," + conditions) + "]}}";
}

TEST(Node, OursOtherToolsAndNone) {
  NodeFacts ours = ParseNode(Node(R"({"taints":[{"key":"other","effect":"NoExecute"}]})", kOurs,
                                  R"({"gpuscope.io/remediate":"false"})"),
                             false);
  EXPECT_TRUE(ours.view.error.empty()) << ours.view.error;
  EXPECT_TRUE(ours.view.found);
  EXPECT_TRUE(ours.view.drained);
  EXPECT_TRUE(IsOurReason(ours.view.reason));
  EXPECT_TRUE(ours.our_condition);
  EXPECT_TRUE(ours.view.opted_out);
  EXPECT_EQ(ours.resource_version, "41");
  EXPECT_EQ(json::parse(ours.taints), json::parse(R"([{"key":"other","effect":"NoExecute"}])"));

  NodeFacts other = ParseNode(
      Node("{}", R"({"type":"GpuHealthy","status":"False","message":"NVSentinel"})"), false);
  EXPECT_TRUE(other.view.drained);
  EXPECT_EQ(other.view.reason, "NVSentinel");  // another tool's condition: never ours
  EXPECT_FALSE(other.view.opted_out);
  EXPECT_EQ(other.taints, "[]");

  NodeFacts healthy = ParseNode(
      Node("{}", R"({"type":"GpuHealthy","status":"True","message":"gpuscope: ok"})"), false);
  EXPECT_FALSE(healthy.view.drained);
  EXPECT_FALSE(healthy.our_condition);
}

// Issue 39, item 3: a person's cordon or out-of-service taint is their
// drain: reported drained with a reason that is not ours (admin_drain).
TEST(Node, APersonsCordonOrTaintIsTheirDrain) {
  for (const char* spec : {
           R"({"unschedulable":true})",
           R"({"taints":[{"key":"node.kubernetes.io/unschedulable","effect":"NoSchedule"}]})",
           R"({"taints":[{"key":"node.kubernetes.io/out-of-service","value":"nodeshutdown",
               "effect":"NoExecute"}]})",
           R"({"taints":[{"key":"maintenance","value":"psu","effect":"NoExecute"}]})",
           R"({"taints":[{"key":"ToBeDeletedByClusterAutoscaler","value":"1",
               "effect":"NoSchedule"}]})",
       }) {
    NodeFacts f = ParseNode(Node(spec, ""), false);
    EXPECT_TRUE(f.view.error.empty()) << f.view.error;
    EXPECT_TRUE(f.view.drained) << spec;
    EXPECT_FALSE(f.view.reason.empty()) << spec;
    EXPECT_FALSE(IsOurReason(f.view.reason)) << spec << ": " << f.view.reason;
  }
  EXPECT_NE(ParseNode(Node(R"({"unschedulable":true})", ""), false).view.reason.find("cordoned"),
            std::string::npos);
  EXPECT_NE(ParseNode(Node(R"({"taints":[{"key":"maintenance","value":"psu",
                               "effect":"NoExecute"}]})",
                           ""),
                      false)
                .view.reason.find("maintenance=psu:NoExecute"),
            std::string::npos);
  // Not a drain: a dedication (NoSchedule: pods with the toleration still run),
  // the node controller's own condition taints, and ours.
  for (const char* spec : {
           R"({"unschedulable":false})",
           R"({"taints":[{"key":"nvidia.com/gpu","value":"present","effect":"NoSchedule"}]})",
           R"({"taints":[{"key":"node.kubernetes.io/not-ready","effect":"NoExecute"}]})",
           R"({"taints":[{"key":"node.kubernetes.io/unreachable","effect":"NoExecute"}]})",
           R"({"taints":[{"key":"dedicated","value":"ml","effect":"PreferNoSchedule"}]})",
       }) {
    EXPECT_FALSE(ParseNode(Node(spec, ""), false).view.drained) << spec;
  }
}

// A person who cordons a node gpuscope drained: the drain stays ours (our
// condition stands), so resume takes back our condition and taint only.
TEST(Node, OurConditionStaysOursUnderAPersonsCordon) {
  NodeFacts f = ParseNode(Node(R"({"unschedulable":true})", kOurs), true);
  EXPECT_TRUE(f.view.drained);
  EXPECT_TRUE(IsOurReason(f.view.reason));
  EXPECT_TRUE(f.our_condition);
}

// Issue 39, item 5: with --remediate-taint our condition without our taint is
// a drain half done: not drained, so the policy's next drain finishes it.
TEST(Node, HalfDoneDrainAndResume) {
  NodeFacts half = ParseNode(Node("{}", kOurs), true);
  EXPECT_FALSE(half.view.drained);
  EXPECT_TRUE(half.our_condition);
  EXPECT_FALSE(half.our_taint);
  EXPECT_TRUE(ParseNode(Node("{}", kOurs), false).view.drained);  // no taint asked for
  NodeFacts done = ParseNode(Node(std::string(R"({"taints":[)") + kOurTaint + "]}", kOurs), true);
  EXPECT_TRUE(done.view.drained);
  EXPECT_TRUE(done.our_taint);
  // The taint left by a resume that could not remove it: still ours to resume.
  NodeFacts left =
      ParseNode(Node(std::string(R"({"taints":[)") + kOurTaint + "]}",
                     R"({"type":"GpuHealthy","status":"True","message":"gpuscope: healthy"})"),
                false);
  EXPECT_TRUE(left.view.drained);
  EXPECT_TRUE(IsOurReason(left.view.reason));
  EXPECT_FALSE(left.our_condition);
  EXPECT_TRUE(left.our_taint);
}

TEST(Node, FieldsOfTheWrongTypeAreAnErrorNotACrash) {
  for (const char* bad : {
           R"({"metadata":"x"})",
           R"({"metadata":{"resourceVersion":41}})",
           R"({"metadata":{"labels":[]}})",
           R"({"metadata":{"labels":{"gpuscope.io/remediate":false}}})",
           R"({"spec":{"unschedulable":"true"}})",
           R"({"spec":{"taints":{}}})",
           R"({"spec":{"taints":["x"]}})",
           R"({"spec":{"taints":[{"key":7}]}})",
           R"({"status":[]})",
           R"({"status":{"conditions":[7]}})",
           R"({"status":{"conditions":[{"type":"GpuHealthy","status":false}]}})",
           R"({"status":{"conditions":[{"type":"GpuHealthy","message":{}}]}})",
           R"([1])",
           "<html>",
       }) {
    NodeFacts f = ParseNode(bad, true);
    EXPECT_FALSE(f.view.found) << bad;
    EXPECT_EQ(f.view.error.rfind("the API server's", 0), 0u) << bad << ": " << f.view.error;
  }
  EXPECT_NE(ParseNode(R"({"spec":{"unschedulable":"true"}})", false)
                .view.error.find("spec.unschedulable is string, not a boolean"),
            std::string::npos);
  json patch = json::parse(TaintPatch(R"([{"key":7},"x"])", true, "1"));
  EXPECT_EQ(patch[1]["value"].size(), 3u);
}

// Every field of a full answer, in turn, replaced by a value of each other
// type: an answer or an error, never an exception or an abort (issue 39:
// every JSON field read from the network is type-checked).
void ForEachRetyped(const json& doc, const std::function<void(const std::string&)>& parse) {
  const json flat = doc.flatten();
  std::vector<std::string> pointers;
  for (const auto& [pointer, value] : flat.items()) {
    for (std::string p = pointer; !p.empty(); p = p.substr(0, p.rfind('/'))) pointers.push_back(p);
  }
  for (const std::string& pointer : pointers) {
    for (const json& other : {json(7), json("x"), json(true), json::array(), json::object(),
                              json(nullptr), json::array({1, "y"})}) {
      json bad = doc;
      bad[json::json_pointer(pointer)] = other;
      EXPECT_NO_THROW(parse(bad.dump())) << pointer << " = " << other.dump();
    }
  }
}

TEST(Node, AnyFieldOfAnotherTypeIsAnAnswerOrAnError) {
  const json node = json::parse(Node(
      std::string(R"({"unschedulable":true,"taints":[)") + kOurTaint + R"(,{"key":"k","value":"v",
                                         "effect":"NoExecute"}]})",
      kOurs, R"({"gpuscope.io/remediate":"false"})"));
  int errors = 0;
  ForEachRetyped(node, [&](const std::string& text) {
    NodeFacts f = ParseNode(text, true);
    errors += !f.view.error.empty();
    EXPECT_TRUE(f.view.error.empty() || !f.view.found);
  });
  EXPECT_GT(errors, 20);
}

TEST(NodePage, AnyFieldOfAnotherTypeIsAnAnswerOrAnError) {
  const json page = json::parse(R"({"kind":"NodeList","metadata":{"continue":"t"},"items":[
    {"metadata":{"name":"a"},"status":{"conditions":[)" +
                                std::string(kOurs) + R"(]}}]})");
  ForEachRetyped(page, [](const std::string& text) {
    NodePage p = ParseNodePage(text);
    EXPECT_TRUE(p.error.empty() || (p.nodes == 0 && p.next.empty()));
  });
}

TEST(NodePage, CountsAndTheContinueToken) {
  NodePage p = ParseNodePage(R"({"kind":"NodeList","apiVersion":"v1",
    "metadata":{"resourceVersion":"9","continue":"eyJ2IjoxfQ==","remainingItemCount":3},
    "items":[
     {"metadata":{"name":"a","labels":{"x":"y"}},"status":{"images":7,"conditions":[)" +
                             std::string(kOurs) + R"(]}},
     {"metadata":{"name":"b"},"status":{"conditions":[
       {"type":"GpuHealthy","status":"False","message":"NVSentinel: fatal"}]}},
     {"metadata":{"name":"c"},"spec":{"taints":"ignored"}},
     {"metadata":{"name":"d"},"status":{"conditions":[
       {"type":"GpuHealthy","status":"True","message":"gpuscope: ok"}]}}]})");
  EXPECT_TRUE(p.error.empty()) << p.error;
  EXPECT_EQ(p.nodes, 4);
  EXPECT_EQ(p.drained_by_us, std::vector<std::string>{"a"});
  EXPECT_EQ(p.next, "eyJ2IjoxfQ==");
  NodePage last = ParseNodePage(R"({"kind":"NodeList","metadata":{},"items":[]})");
  EXPECT_TRUE(last.error.empty()) << last.error;
  EXPECT_EQ(last.nodes, 0);
  EXPECT_EQ(last.next, "");
  for (const char* bad : {
           R"({"kind":"NodeList","items":{}})",
           R"({"kind":"NodeList"})",
           R"({"kind":"Status","items":[]})",
           R"({"kind":"NodeList","metadata":{"continue":5},"items":[]})",
           R"({"kind":"NodeList","items":[7]})",
           R"({"kind":"NodeList","items":[{"metadata":{"name":7}}]})",
           R"({"kind":"NodeList","items":[{"status":{"conditions":[{"type":1}]}}]})",
           "[]",
           "{",
       }) {
    NodePage b = ParseNodePage(bad);
    EXPECT_EQ(b.error.rfind("the API server's node list", 0), 0u) << bad << ": " << b.error;
    EXPECT_EQ(b.nodes, 0) << bad;
  }
}

TEST(Patches, ConditionIsAStrategicMergeOfOneCondition) {
  json p = json::parse(
      ConditionPatch(false, "GpuscopeXid79", "gpuscope: XID 79 on GPU 3", "2026-12-04T08:00:00Z"));
  ASSERT_EQ(p["status"]["conditions"].size(), 1u);
  const json& c = p["status"]["conditions"][0];
  EXPECT_EQ(c["type"], "GpuHealthy");
  EXPECT_EQ(c["status"], "False");
  EXPECT_EQ(c["reason"], "GpuscopeXid79");
  EXPECT_EQ(c["message"], "gpuscope: XID 79 on GPU 3");
  EXPECT_EQ(c["lastTransitionTime"], "2026-12-04T08:00:00Z");
}

TEST(Patches, TaintIsAddedOnceAndRemovedKeepingOthers) {
  const std::string others = R"([{"key":"other","effect":"NoExecute"}])";
  json add = json::parse(TaintPatch(others, true, "41"));
  EXPECT_EQ(add[0],
            json::parse(R"({"op":"test","path":"/metadata/resourceVersion","value":"41"})"));
  EXPECT_EQ(add[1]["op"], "add");
  EXPECT_EQ(add[1]["path"], "/spec/taints");
  ASSERT_EQ(add[1]["value"].size(), 2u);
  EXPECT_EQ(add[1]["value"][1], json::parse(kOurTaint));
  const std::string with_ours = add[1]["value"].dump();
  EXPECT_EQ(json::parse(TaintPatch(with_ours, true, "42"))[1]["value"].size(), 2u);
  json remove = json::parse(TaintPatch(with_ours, false, "43"));
  EXPECT_EQ(remove[1]["value"], json::parse(others));
}

constexpr int64_t kNow = 1796371200;  // 2026-12-04T08:00:00Z

std::string LeaseText(const std::string& holders) {
  json lease = {{"apiVersion", "coordination.k8s.io/v1"},
                {"kind", "Lease"},
                {"metadata",
                 {{"name", "gpuscope-remediation"},
                  {"namespace", "gpuscope"},
                  {"resourceVersion", "7"},
                  {"annotations", {{"gpuscope.io/drained-nodes", holders}}}}},
                {"spec", json::object()}};
  return lease.dump();
}

TEST(Lease, HoldersRoundTripThroughTheAnnotation) {
  EXPECT_EQ(FormatTime(kNow), "2026-12-04T08:00:00Z");
  Result<BreakerLease> lease =
      ParseLease(LeaseText(R"({"n1":"2026-12-04T08:00:00Z","n2":"2026-12-04T07:59:00Z"})"));
  ASSERT_TRUE(lease.ok()) << lease.status().message();
  EXPECT_EQ(lease->holders, (Holders{{"n1", kNow}, {"n2", kNow - 60}}));
  json put = json::parse(LeaseWithHolders(*lease, Holders{{"n3", kNow}}));
  EXPECT_EQ(put["metadata"]["resourceVersion"], "7");  // the PUT's precondition
  EXPECT_EQ(put["metadata"]["name"], "gpuscope-remediation");
  EXPECT_EQ(
      json::parse(put["metadata"]["annotations"]["gpuscope.io/drained-nodes"].get<std::string>()),
      json::parse(R"({"n3":"2026-12-04T08:00:00Z"})"));
  json made = json::parse(NewLease("gpuscope-remediation", "ops"));
  EXPECT_EQ(made["apiVersion"], "coordination.k8s.io/v1");
  EXPECT_EQ(made["kind"], "Lease");
  EXPECT_EQ(made["metadata"]["namespace"], "ops");
  EXPECT_FALSE(made["metadata"].contains("resourceVersion"));
  // A Lease made by NewLease (as the API server answers it) has no holders.
  made["metadata"]["resourceVersion"] = "1";
  Result<BreakerLease> fresh = ParseLease(made.dump());
  ASSERT_TRUE(fresh.ok()) << fresh.status().message();
  EXPECT_TRUE(fresh->holders.empty());
}

TEST(Lease, AnUnreadableLeaseIsAnErrorSoTheBreakerFailsClosed) {
  for (const std::string& bad : {
           LeaseText("[]"),
           LeaseText("not json"),
           LeaseText(R"({"n1":5})"),
           LeaseText(R"({"n1":"yesterday"})"),
           LeaseText(R"({"n1":"2026-02-31T08:00:00Z"})"),
           LeaseText(R"({"":"2026-12-04T08:00:00Z"})"),
           std::string(R"({"metadata":{"resourceVersion":"1","annotations":{
             "gpuscope.io/drained-nodes":{}}}})"),
           std::string(R"({"metadata":{"annotations":{}}})"),  // no resourceVersion
           std::string(R"({"metadata":[]})"),
           std::string("<html>"),
       }) {
    Result<BreakerLease> lease = ParseLease(bad);
    EXPECT_FALSE(lease.ok()) << bad;
    if (!lease.ok()) {
      EXPECT_EQ(lease.status().message().rfind("the breaker's Lease", 0), 0u)
          << lease.status().message();
    }
  }
}

TEST(Lease, AnyFieldOfAnotherTypeIsAnAnswerOrAnError) {
  ForEachRetyped(json::parse(LeaseText(R"({"n1":"2026-12-04T08:00:00Z"})")),
                 [](const std::string& text) {
                   Result<BreakerLease> lease = ParseLease(text);
                   if (lease.ok()) LeaseWithHolders(*lease, {{"n2", kNow}});
                 });
}

TEST(Lease, ClaimTakesAFreeSlotOnly) {
  const Sighting none;
  std::optional<Holders> first = PlanClaim({}, "n1", 1, none, kNow);
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, (Holders{{"n1", kNow}}));
  EXPECT_FALSE(PlanClaim(*first, "n2", 1, none, kNow + 1));  // the limit: no slot
  std::optional<Holders> second = PlanClaim(*first, "n2", 2, none, kNow + 1);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->size(), 2u);
  // A node that holds a slot keeps it, its claim renewed, whatever the limit.
  std::optional<Holders> again = PlanClaim(*second, "n1", 1, none, kNow + 5);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->at("n1"), kNow + 5);
  EXPECT_EQ(OtherHolders(*second, "n1", none, kNow), 1);
  EXPECT_EQ(OtherHolders(*second, "n9", none, kNow), 2);
}

TEST(Lease, StaleHoldersArePrunedAndDrainedNodesAdopted) {
  const int64_t old = kNow - kClaimGraceS - 1;
  const Holders current = {
      {"gone", old}, {"resumed", old}, {"drained", old}, {"young", kNow - 5}, {"after-read", old}};
  Sighting seen;
  seen.holders = {"gone", "resumed", "drained", "young"};  // "after-read" came later
  seen.drained_by_us = {"drained", "legacy"};              // "legacy": drained before the Lease
  EXPECT_FALSE(StillHolds("gone", old, seen, kNow));
  EXPECT_FALSE(StillHolds("resumed", old, seen, kNow));
  EXPECT_TRUE(StillHolds("drained", old, seen, kNow));
  EXPECT_TRUE(StillHolds("young", kNow - 5, seen, kNow));  // between claim and condition
  EXPECT_TRUE(StillHolds("after-read", old, seen, kNow));  // not seen: never judged
  EXPECT_EQ(OtherHolders(current, "me", seen, kNow), 4);   // drained, young, after-read, legacy
  EXPECT_FALSE(PlanClaim(current, "me", 4, seen, kNow));
  std::optional<Holders> claimed = PlanClaim(current, "me", 5, seen, kNow);
  ASSERT_TRUE(claimed);
  EXPECT_EQ(*claimed, (Holders{{"drained", old},
                               {"young", kNow - 5},
                               {"after-read", old},
                               {"legacy", kNow},
                               {"me", kNow}}));
  EXPECT_EQ(PlanRelease(*claimed, "me", seen, kNow + 1).count("me"), 0u);
  EXPECT_EQ(PlanRelease(current, "young", seen, kNow),
            (Holders{{"drained", old}, {"after-read", old}}));
}

}  // namespace
}  // namespace gpuscope::remediate
