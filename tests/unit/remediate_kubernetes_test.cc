// The Kubernetes actuator's pure parts (remediate/kubernetes.h): the node list
// and the PATCH bodies. The requests themselves are checked against a fake API
// server in tests/integration/test_remediate_kubernetes.py.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "remediate/kubernetes.h"

namespace gpuscope::remediate {
namespace {

using nlohmann::json;

constexpr char kList[] = R"({"kind":"NodeList","items":[
 {"metadata":{"name":"a","resourceVersion":"41","labels":{"gpuscope.io/remediate":"false"}},
  "spec":{"taints":[{"key":"other","effect":"NoExecute"}]},
  "status":{"conditions":[{"type":"Ready","status":"True"},
   {"type":"GpuHealthy","status":"False","message":"gpuscope: XID 79 on GPU 3 (GPU-3) u"}]}},
 {"metadata":{"name":"b"},"status":{"conditions":[
   {"type":"GpuHealthy","status":"False","message":"NVSentinel: fatal"}]}},
 {"metadata":{"name":"c"},"status":{"conditions":[
   {"type":"GpuHealthy","status":"True","message":"gpuscope: healthy"}]}},
 {"metadata":{"name":"d"}}]})";

TEST(NodeList, ViewOfTheNodeAndTheBreakerCount) {
  std::string rv, taints;
  NodeView a = ParseNodeList(kList, "a", &rv, &taints);
  EXPECT_TRUE(a.error.empty());
  EXPECT_TRUE(a.found);
  EXPECT_TRUE(a.drained);
  EXPECT_TRUE(IsOurReason(a.reason));
  EXPECT_TRUE(a.opted_out);
  EXPECT_EQ(a.nodes, 4);
  EXPECT_EQ(a.drained_by_us, 1);
  EXPECT_EQ(rv, "41");
  EXPECT_EQ(json::parse(taints), json::parse(R"([{"key":"other","effect":"NoExecute"}])"));
  NodeView b = ParseNodeList(kList, "b", &rv, &taints);
  EXPECT_TRUE(b.drained);
  EXPECT_FALSE(IsOurReason(b.reason));  // another tool's condition: never ours
  EXPECT_FALSE(b.opted_out);
  EXPECT_EQ(taints, "[]");
  EXPECT_FALSE(ParseNodeList(kList, "c", &rv, &taints).drained);
  EXPECT_FALSE(ParseNodeList(kList, "z", &rv, &taints).found);
  EXPECT_FALSE(ParseNodeList("<html>", "a", &rv, &taints).error.empty());
}

TEST(NodeList, FieldsOfTheWrongTypeAreAnErrorNotACrash) {
  std::string rv, taints;
  for (const char* bad :
       {R"({"items":[{"metadata":"x"}]})", R"({"items":[{"metadata":{"name":7}}]})",
        R"({"items":[{"metadata":{"name":"a","resourceVersion":41}}]})",
        R"({"items":[{"status":{"conditions":[{"type":"GpuHealthy","status":false}]}}]})"}) {
    NodeView v = ParseNodeList(bad, "a", &rv, &taints);
    EXPECT_FALSE(v.found) << bad;
    EXPECT_EQ(v.error.rfind("the API server's node list", 0), 0u) << bad << ": " << v.error;
  }
  // A condition that is not an object is skipped.
  NodeView odd = ParseNodeList(R"({"items":[{"status":{"conditions":[7]}}]})", "a", &rv, &taints);
  EXPECT_TRUE(odd.error.empty()) << odd.error;
  EXPECT_EQ(odd.nodes, 1);
  json patch = json::parse(TaintPatch(R"([{"key":7},"x"])", true, "1"));
  EXPECT_EQ(patch[1]["value"].size(), 3u);
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
  EXPECT_EQ(
      add[1]["value"][1],
      json::parse(R"({"key":"gpuscope.io/gpu-unhealthy","value":"true","effect":"NoSchedule"})"));
  const std::string with_ours = add[1]["value"].dump();
  EXPECT_EQ(json::parse(TaintPatch(with_ours, true, "42"))[1]["value"].size(), 2u);
  json remove = json::parse(TaintPatch(with_ours, false, "43"));
  EXPECT_EQ(remove[1]["value"], json::parse(others));
}

}  // namespace
}  // namespace gpuscope::remediate
