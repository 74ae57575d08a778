// The `gpuscope baseline` report: joining the recorded series, verdicts,
// text and JSON, and the Prometheus answer parser.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "baseline/prom_client.h"
#include "baseline/report.h"

namespace gpuscope::baseline {
namespace {

using ::testing::HasSubstr;

Sample S(const std::string& workload, const std::string& signal, double v) {
  return {{{"namespace", "ml"}, {"workload", workload}, {"model", "H100"}, {"signal", signal}}, v};
}

// Answers in ReportQueries' order: p5, p50, p95, spread, days, warming, current.
std::vector<std::vector<Sample>> Answers(const std::string& wl, const std::string& sig,
                                         double current, bool warming = false) {
  return {{S(wl, sig, 0.8)},    {S(wl, sig, 0.85)}, {S(wl, sig, 0.9)},
          {S(wl, sig, 0.01)},   {S(wl, sig, 14)},   {S(wl, sig, warming ? 1 : 0)},
          {S(wl, sig, current)}};
}

TEST(BaselineReport, VerdictsFollowTheSignalsDirection) {
  ReportOptions o;
  auto one = [&](const std::string& sig, double current, bool warming = false) {
    std::vector<Row> rows = BuildReport(o, Answers("w", sig, current, warming));
    EXPECT_EQ(rows.size(), 1u);
    return rows.at(0);
  };
  Row low = one("sm_active", 0.6);
  EXPECT_EQ(low.verdict, "below");
  EXPECT_NEAR(*low.deviation, (0.6 - 0.85) / 0.02, 1e-9);  // the floor, not 0.01
  EXPECT_EQ(one("sm_active", 0.86).verdict, "normal");
  EXPECT_EQ(one("sm_active", 0.99).verdict, "unusual");  // rising SM activity is no alarm
  EXPECT_EQ(one("tensor_active", 0.5).verdict, "unusual");
  EXPECT_EQ(one("sm_active", 0.1, true).verdict, "warming-up");
  std::vector<std::vector<Sample>> no_current = Answers("w", "sm_active", 0);
  no_current[6].clear();
  EXPECT_EQ(BuildReport(o, no_current).at(0).verdict, "no-current");
}

TEST(BaselineReport, TextAndJson) {
  ReportOptions o;
  std::vector<Row> rows = BuildReport(o, Answers("trainer", "sm_active", 0.6));
  std::string text = RenderText(o, rows);
  EXPECT_THAT(text, HasSubstr("ml/trainer"));
  EXPECT_THAT(text, HasSubstr("85.0%"));
  EXPECT_THAT(text, HasSubstr("-12.5"));
  EXPECT_THAT(text, HasSubstr("below"));
  nlohmann::json doc = nlohmann::json::parse(RenderJson(o, "http://p:9090", rows));
  EXPECT_EQ(doc["baselines"][0]["verdict"], "below");
  EXPECT_DOUBLE_EQ(doc["baselines"][0]["p50"].get<double>(), 0.85);
  EXPECT_EQ(doc["window_days"], 14);
  EXPECT_THAT(RenderText(o, {}), HasSubstr("No baselines recorded yet"));
}

TEST(BaselineReport, QueriesReadTheWindowSeries) {
  ReportOptions o;
  o.window_days = 28;
  o.workload = "trainer";
  std::vector<std::string> q = ReportQueries(o);
  ASSERT_EQ(q.size(), 7u);
  EXPECT_EQ(q[1], "last_over_time(gpuscope:workload_signal:p50_28d{workload=\"trainer\"}[120m])");
  EXPECT_EQ(q[6], "last_over_time(gpuscope:workload_signal:avg5m{workload=\"trainer\"}[10m])");
}

TEST(PromClient, ParsesVectorsAndErrors) {
  Result<std::vector<Sample>> ok = ParseQueryResponse(
      R"({"status":"success","data":{"resultType":"vector","result":[)"
      R"({"metric":{"workload":"a"},"value":[1,"0.5"]},{"metric":{},"value":[1,"NaN"]}]}})");
  ASSERT_TRUE(ok.ok()) << ok.status().message();
  ASSERT_EQ(ok->size(), 2u);
  EXPECT_EQ((*ok)[0].labels.at("workload"), "a");
  EXPECT_DOUBLE_EQ((*ok)[0].value, 0.5);
  EXPECT_THAT(ParseQueryResponse(R"({"status":"error","error":"parse error at char 3"})")
                  .status()
                  .message(),
              HasSubstr("parse error at char 3"));
  EXPECT_THAT(ParseQueryResponse("<html>").status().message(), HasSubstr("not JSON"));
  EXPECT_THAT(ParseQueryResponse(R"({"status":"success","data":{"resultType":"matrix",)"
                                 R"("result":[]}})")
                  .status()
                  .message(),
              HasSubstr("matrix"));
}

// Every field of a Prometheus answer with the wrong type: a clear error naming
// the field, never an exception (issue 39: `"status": 1` aborted the command).
TEST(PromClient, WrongTypesAreClearErrors) {
  const std::string ok_head = R"({"status":"success","data":{"resultType":"vector","result":)";
  const std::pair<std::string, std::string> cases[] = {
      {R"({"status":1})", "status is not a string"},
      {R"({"status":null})", "status is not a string"},
      {R"({})", "status is not a string"},
      {R"({"status":"error","error":7})", "query failed: error"},
      {R"({"status":"success"})", "data is not an object"},
      {R"({"status":"success","data":[]})", "data is not an object"},
      {R"({"status":"success","data":{"resultType":3,"result":[]}})", "resultType is not"},
      {R"({"status":"success","data":{"resultType":"vector"}})", "data.result is not an array"},
      {ok_head + "{}}}", "data.result is not an array"},
      {ok_head + "[1]}}", "data.result[0] is not an object"},
      {ok_head + R"([{"metric":[],"value":[1,"1"]}]}})", "data.result[0].metric is not"},
      {ok_head + R"([{"metric":{"a":1},"value":[1,"1"]}]}})", "data.result[0].metric.a is not"},
      {ok_head + R"([{"metric":{},"value":5}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"metric":{},"value":[1,2]}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"metric":{},"value":["1","2"]}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"metric":{},"value":[1]}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"metric":{},"value":[1,"2",3]}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"metric":{},"value":[1,"12abc"]}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"metric":{},"value":[1,""]}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"metric":{}}]}})", "data.result[0].value is not"},
      {ok_head + R"([{"value":[1,"1"]}]}})", "data.result[0].metric is not"},
  };
  for (const auto& [body, want] : cases) {
    Result<std::vector<Sample>> r = ParseQueryResponse(body);
    ASSERT_FALSE(r.ok()) << body;
    EXPECT_THAT(r.status().message(), HasSubstr(want)) << body;
  }
  Result<std::vector<Sample>> inf = ParseQueryResponse(
      ok_head + R"([{"metric":{},"value":[1,"+Inf"]},)" + R"({"metric":{},"value":[1,"1e3"]}]}})");
  ASSERT_TRUE(inf.ok()) << inf.status().message();
  EXPECT_TRUE(std::isinf((*inf)[0].value));
  EXPECT_DOUBLE_EQ((*inf)[1].value, 1000);
}

// Deep nesting and too many values are refused before nlohmann builds them.
TEST(PromClient, AnswersTooDeepOrTooManyAreRefusedBeforeParsing) {
  EXPECT_THAT(ParseQueryResponse(std::string(1 << 20, '[')).status().message(),
              HasSubstr("nests deeper than 32 levels"));
  std::string flat = "[";
  for (int i = 0; i < 2'000'001; ++i) flat += "0,";
  EXPECT_THAT(ParseQueryResponse(flat + "0]").status().message(),
              HasSubstr("holds more than 2000000 values"));
}

// What a server says goes into messages escaped, never as raw terminal bytes.
TEST(PromClient, ErrorsEscapeTheServersText) {
  Result<std::vector<Sample>> r =
      ParseQueryResponse(R"({"status":"error","error":"bad\u001b[2Jthing"})");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("bad\\x1b[2Jthing"));
  EXPECT_EQ(ParseQueryResponse("\x1b[2J<html>").status().message().find('\x1b'), std::string::npos);
}

TEST(PromClient, OptionsFailClosed) {
  EXPECT_THAT(PromClient::Create({.url = "ftp://x"}).status().message(), HasSubstr("http"));
  EXPECT_THAT(
      PromClient::Create({.url = "https://x", .ca_file = "/nonexistent/ca.pem"}).status().message(),
      HasSubstr("--ca-file /nonexistent/ca.pem: cannot read"));
  EXPECT_THAT(PromClient::Create({.url = "https://x", .username = "u"}).status().message(),
              HasSubstr("go together"));
  EXPECT_THAT(
      PromClient::Create({.url = "https://x", .username = "u", .password_file = "/nonexistent/pw"})
          .status()
          .message(),
      HasSubstr("cannot read a password"));
  EXPECT_TRUE(PromClient::Create({.url = "http://127.0.0.1:9/"}).ok());
}

TEST(PromClient, UnreachableServerIsAnError) {
  Result<PromClient> c = PromClient::Create({.url = "http://127.0.0.1:1", .timeout_seconds = 5});
  ASSERT_TRUE(c.ok());
  Result<std::vector<Sample>> r = c->Query("up");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("Prometheus at http://127.0.0.1:1"));
}

}  // namespace
}  // namespace gpuscope::baseline
