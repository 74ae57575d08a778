#include "baseline/report.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <tuple>

#include "baseline/rules.h"
#include "fmt/format.h"

namespace gpuscope::baseline {
namespace {

using Key = std::tuple<std::string, std::string, std::string, std::string, std::string>;

enum Field { kP5, kP50, kP95, kSpread, kHistory, kWarming, kCurrent, kFields };

std::string Label(const Sample& s, const std::string& name) {
  auto it = s.labels.find(name);
  return it == s.labels.end() ? "" : it->second;
}

Key KeyOf(const Sample& s) {
  return {Label(s, "namespace"), Label(s, "workload"), Label(s, "hpc_job"), Label(s, "model"),
          Label(s, "signal")};
}

const Signal* FindSignal(const ReportOptions& o, const std::string& name) {
  for (const Signal& s : o.signals) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

void Judge(const ReportOptions& o, Row& row) {
  const Signal* sig = FindSignal(o, row.signal);
  if (row.warming_up || !row.p50 || !row.spread) {
    row.verdict = "warming-up";
    return;
  }
  if (!row.current) {
    row.verdict = "no-current";
    return;
  }
  const double floor = sig ? sig->spread_floor : 1e-9;
  row.deviation = (*row.current - *row.p50) / std::max(*row.spread, floor);
  const Direction bad = sig ? sig->bad : Direction::kNone;
  const double d = *row.deviation;
  if (bad == Direction::kFalling && d <= -o.k) {
    row.verdict = "below";
  } else if (bad == Direction::kRising && d >= o.k) {
    row.verdict = "above";
  } else if (std::fabs(d) >= o.k) {
    row.verdict = "unusual";
  } else {
    row.verdict = "normal";
  }
}

std::string Value(const ReportOptions& o, const std::string& signal, std::optional<double> v) {
  if (!v) return "-";
  const Signal* sig = FindSignal(o, signal);
  switch (sig ? sig->unit : Unit::kPlain) {
    case Unit::kRatio:
      return fmt::format("{:.1f}%", *v * 100);
    case Unit::kWatts:
      return fmt::format("{:.0f} W", *v);
    case Unit::kCelsius:
      return fmt::format("{:.1f} C", *v);
    case Unit::kPlain:
      break;
  }
  return fmt::format("{:.4g}", *v);
}

nlohmann::json Num(std::optional<double> v) {
  if (!v || !std::isfinite(*v)) return nullptr;
  return *v;
}

}  // namespace

std::vector<std::string> ReportQueries(const ReportOptions& o) {
  const std::string sel = o.workload.empty() ? "" : fmt::format("{{workload=\"{}\"}}", o.workload);
  auto last = [&](const std::string& name) {
    return fmt::format("last_over_time({}{}[{}m])", name, sel, 2 * o.baseline_interval_minutes);
  };
  const int w = o.window_days;
  return {last(SeriesName("p5", w)),
          last(SeriesName("p50", w)),
          last(SeriesName("p95", w)),
          last(SeriesName("spread", w)),
          last(fmt::format("gpuscope:workload_baseline:history_days_{}d", w)),
          last(fmt::format("gpuscope:workload_baseline:warming_up_{}d", w)),
          fmt::format("last_over_time({}{}[10m])", SeriesName("avg5m", w), sel)};
}

std::vector<Row> BuildReport(const ReportOptions& o,
                             const std::vector<std::vector<Sample>>& answers) {
  std::map<Key, Row> rows;
  for (size_t f = 0; f < answers.size() && f < kFields; ++f) {
    for (const Sample& s : answers[f]) {
      Key key = KeyOf(s);
      Row& row = rows[key];
      std::tie(row.namespace_, row.workload, row.hpc_job, row.model, row.signal) = key;
      std::optional<double>* slots[] = {&row.p5,           &row.p50, &row.p95,    &row.spread,
                                        &row.history_days, nullptr,  &row.current};
      if (f == kWarming) {
        row.warming_up = s.value != 0;
      } else {
        *slots[f] = s.value;
      }
    }
  }
  std::vector<Row> out;
  for (auto& [key, row] : rows) {
    Judge(o, row);
    out.push_back(std::move(row));
  }
  return out;
}

std::string RenderText(const ReportOptions& o, const std::vector<Row>& rows) {
  if (rows.empty()) {
    return "No baselines recorded yet (load deploy/prometheus/rules/gpu-baselines.yml into "
           "Prometheus; see docs/baselines.md).\n";
  }
  std::string out =
      fmt::format("{:<32} {:<24} {:<20} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}  {}\n", "WORKLOAD",
                  "MODEL", "SIGNAL", "P5", "P50", "P95", "CURRENT", "DEVIATION", "DAYS", "VERDICT");
  for (const Row& r : rows) {
    std::string who = (r.namespace_.empty() ? "" : r.namespace_ + "/") + r.workload;
    if (!r.hpc_job.empty()) who += " job " + r.hpc_job;
    out += fmt::format("{:<32} {:<24} {:<20} {:>9} {:>9} {:>9} {:>9} {:>9} {:>6}  {}\n", who,
                       r.model, r.signal, Value(o, r.signal, r.p5), Value(o, r.signal, r.p50),
                       Value(o, r.signal, r.p95), Value(o, r.signal, r.current),
                       r.deviation ? fmt::format("{:+.1f}", *r.deviation) : std::string("-"),
                       r.history_days ? fmt::format("{:.1f}", *r.history_days) : std::string("-"),
                       r.verdict);
  }
  return out;
}

std::string RenderJson(const ReportOptions& o, const std::string& url,
                       const std::vector<Row>& rows) {
  nlohmann::json doc = {{"prometheus", url}, {"window_days", o.window_days}, {"k", o.k}};
  nlohmann::json list = nlohmann::json::array();
  for (const Row& r : rows) {
    list.push_back({{"namespace", r.namespace_},
                    {"workload", r.workload},
                    {"hpc_job", r.hpc_job},
                    {"model", r.model},
                    {"signal", r.signal},
                    {"p5", Num(r.p5)},
                    {"p50", Num(r.p50)},
                    {"p95", Num(r.p95)},
                    {"spread", Num(r.spread)},
                    {"history_days", Num(r.history_days)},
                    {"warming_up", r.warming_up},
                    {"current", Num(r.current)},
                    {"deviation", Num(r.deviation)},
                    {"verdict", r.verdict}});
  }
  doc["baselines"] = list;
  return doc.dump(2) + "\n";
}

}  // namespace gpuscope::baseline
