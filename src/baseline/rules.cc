#include "baseline/rules.h"

#include <cmath>
#include <set>
#include <sstream>

#include "fmt/format.h"

namespace gpuscope::baseline {
namespace {

constexpr int kAggregatesPerDay = 24 * 60 / 5;
// IQR / 1.349 is the standard deviation for normal data, and ignores outliers.
constexpr double kIqrToSigma = 1.349;
// The build's runbook address (GPUSCOPE_RUNBOOK_URL_BASE, cmake/install_share.cmake).
constexpr std::string_view kRunbooks = GPUSCOPE_RUNBOOK_URL_BASE;
constexpr std::string_view kOn = "on (namespace, workload, hpc_job, model, signal)";

std::string Indent(const std::string& text, int spaces) {
  std::string pad(spaces, ' ');
  std::string out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out += pad + line + "\n";
  return out;
}

// `expr: |` block at rule indentation.
std::string Expr(const std::string& promql) { return "        expr: |\n" + Indent(promql, 10); }

// One value per GPU (a shared GPU's copies folded), then one per holder with
// its attribution and the GPU's model. The holders come from
// gpuscope_gpu_holder_info (--attribution-labels info) or, in series mode,
// from the labels of gpuscope_gpu_info, so the rules read either mode.
std::string PerGpuAggregate(const Signal& s) {
  return fmt::format(
      "avg by ({}) (\n"
      "  max by (instance, gpu, uuid) ({})\n"
      "  * on (instance, gpu, uuid) group_right ()\n"
      "  (\n"
      "    group by (instance, gpu, uuid, namespace, pod, container, hpc_job, workload) (\n"
      "      gpuscope_gpu_holder_info{{workload!=\"\",gpu_instance=\"\"}}\n"
      "        or\n"
      "      (\n"
      "        gpuscope_gpu_info{{workload!=\"\",gpu_instance=\"\"}}\n"
      "          unless on (instance, gpu, uuid) gpuscope_gpu_holder_info\n"
      "      )\n"
      "    )\n"
      "    * on (instance, gpu, uuid) group_left (model)\n"
      "    max by (instance, gpu, uuid, model) (\n"
      "      label_replace(gpuscope_gpu_info, \"model\", \"$1\", \"name\", \"(.+)\")\n"
      "    )\n"
      "  )\n"
      ")",
      kKeyLabels, s.per_gpu);
}

std::string FiveMinuteGroup(const RuleOptions& o) {
  std::string out =
      "  - name: gpuscope-baselines-5m\n"
      "    interval: 5m\n"
      "    rules:\n";
  for (const Signal& s : o.signals) {
    out += "      - record: " + SeriesName("avg5m", o.window_days) + "\n";
    out += Expr(PerGpuAggregate(s));
    out += "        labels:\n          signal: " + s.name + "\n";
  }
  return out;
}

std::string WindowGroup(const RuleOptions& o) {
  const std::string x = fmt::format("{}[{}d]", SeriesName("avg5m", 0), o.window_days);
  std::string out = fmt::format("  - name: gpuscope-baselines-{}d\n    interval: {}m\n    rules:\n",
                                o.window_days, o.baseline_interval_minutes);
  auto rule = [&](const std::string& name, const std::string& expr) {
    out += "      - record: " + name + "\n" + Expr(expr);
  };
  for (auto [what, q] : {std::pair{"p5", 0.05}, {"p50", 0.5}, {"p95", 0.95}}) {
    rule(SeriesName(what, o.window_days), fmt::format("quantile_over_time({}, {})", q, x));
  }
  rule(SeriesName("spread", o.window_days),
       fmt::format("(\n  quantile_over_time(0.75, {0})\n  - quantile_over_time(0.25, {0})\n) / {1}",
                   x, kIqrToSigma));
  rule(fmt::format("gpuscope:workload_baseline:history_days_{}d", o.window_days),
       fmt::format("count_over_time({}) / {}", x, kAggregatesPerDay));
  rule(fmt::format("gpuscope:workload_baseline:warming_up_{}d", o.window_days),
       fmt::format("count_over_time({}) < bool {}", x, o.warmup_days * kAggregatesPerDay));
  return out;
}

// Last value of a window series for this signal (the window group runs hourly).
std::string Last(const RuleOptions& o, const std::string& name, const Signal& s) {
  return fmt::format("last_over_time({}{{signal=\"{}\"}}[{}m])", name, s.name,
                     2 * o.baseline_interval_minutes);
}

std::string AlertExpr(const RuleOptions& o, const Signal& s) {
  const bool falling = s.bad == Direction::kFalling;
  const std::string cur =
      fmt::format("{}{{signal=\"{}\"}}[{}m]", SeriesName("avg5m", 0), s.name, o.sustain_minutes);
  return fmt::format(
      "(\n"
      "  (\n"
      "    {}_over_time({})\n"
      "    - {}\n"
      "    {}\n"
      "  )\n"
      "  / {}\n"
      "  clamp_min({}, {})\n"
      ") {} {}\n"
      "and {}\n"
      "  {} == 0\n"
      "and {}\n"
      "  count_over_time({}) >= {}",
      falling ? "max" : "min", cur, kOn, Last(o, SeriesName("p50", o.window_days), s), kOn,
      Last(o, SeriesName("spread", o.window_days), s), s.spread_floor, falling ? "<" : ">",
      falling ? -o.k : o.k, kOn,
      Last(o, fmt::format("gpuscope:workload_baseline:warming_up_{}d", o.window_days), s), kOn, cur,
      std::max(1, o.sustain_minutes * 5 / 6 / 5));
}

std::string Format(Unit unit) {
  switch (unit) {
    case Unit::kRatio:
      return "humanizePercentage";
    case Unit::kWatts:
      return "printf \"%.0f W\"";
    case Unit::kCelsius:
      return "printf \"%.1f C\"";
    case Unit::kPlain:
      break;
  }
  return "printf \"%.4g\"";
}

// A template that queries one series of this alert's key and prints its value.
std::string Query(const std::string& expr_with_key, Unit unit) {
  return "{{ with printf `" + expr_with_key +
         "` $labels.namespace $labels.workload $labels.hpc_job $labels.model | query }}"
         "{{ . | first | value | " +
         Format(unit) + " }}{{ end }}";
}

std::string Keyed(const std::string& name, const Signal& s) {
  return name + "{signal=\"" + s.name +
         "\",namespace=\"%s\",workload=\"%s\",hpc_job=\"%s\",model=\"%s\"}";
}

std::string QueryLast(const RuleOptions& o, const std::string& name, const Signal& s) {
  return Query(
      fmt::format("last_over_time({}[{}m])", Keyed(name, s), 2 * o.baseline_interval_minutes),
      s.unit);
}

std::string Annotations(const RuleOptions& o, const Signal& s) {
  const bool falling = s.bad == Direction::kFalling;
  const std::string way = falling ? "below" : "above";
  const std::string who =
      "{{ $labels.namespace }}/{{ $labels.workload }}{{ if $labels.hpc_job }} (job "
      "{{ $labels.hpc_job }}){{ end }}";
  const std::string gpus =
      "{{ range $i, $s := printf `count by (instance, gpu) "
      "({__name__=~\"gpuscope_gpu_info|gpuscope_gpu_holder_info\",namespace=\"%s\","
      "workload=\"%s\",hpc_job=\"%s\"} * on (instance, gpu, uuid) group_left () "
      "max by (instance, gpu, uuid) (gpuscope_gpu_info{name=\"%s\"}))` "
      "$labels.namespace $labels.workload $labels.hpc_job $labels.model | query }}"
      "{{ if $i }}, {{ end }}{{ $s.Labels.instance }} GPU {{ $s.Labels.gpu }}{{ end }}";
  const int w = o.window_days;
  std::string out = "        annotations:\n";
  auto add = [&](std::string_view key, const std::string& value) {
    out += fmt::format("          {}: '{}'\n", key, value);
  };
  add("summary", fmt::format("{} of {{{{ $labels.workload }}}} on {{{{ $labels.model }}}} {} its "
                             "{}-day baseline",
                             s.title, way, w));
  add("description",
      fmt::format("{} of workload {} on {{{{ $labels.model }}}} has been more than {} spreads {} "
                  "its {}-day median for {} minutes (deviation {{{{ $value | printf \"%+.1f\" "
                  "}}}}). GPUs: {}.",
                  s.title, who, o.k, way, w, o.sustain_minutes, gpus));
  add("baseline",
      fmt::format("median {}, p5 {}, p95 {}, spread {} over {} days",
                  QueryLast(o, SeriesName("p50", w), s), QueryLast(o, SeriesName("p5", w), s),
                  QueryLast(o, SeriesName("p95", w), s), QueryLast(o, SeriesName("spread", w), s),
                  w));
  add("current",
      Query(fmt::format("last_over_time({}[10m])", Keyed(SeriesName("avg5m", 0), s)), s.unit));
  add("deviation", fmt::format("{{{{ $value | printf \"%+.1f\" }}}} spreads (alert at {}{})",
                               falling ? "-" : "+", o.k));
  // Extra signals share the baselines page (installed beside the runbooks); the
  // defaults have a runbook each.
  add("runbook_url",
      std::string(kRunbooks) +
          (s.alert.empty() ? "baselines.md#alerts-on-extra-signals" : AlertName(s) + ".md"));
  return out;
}

std::string AlertGroup(const RuleOptions& o) {
  std::string out =
      "  - name: gpuscope-baselines-alerts\n"
      "    rules:\n";
  for (const Signal& s : o.signals) {
    if (s.bad == Direction::kNone) continue;
    out += "      - alert: " + AlertName(s) + "\n" + Expr(AlertExpr(o, s));
    out += fmt::format("        labels:\n          severity: warning\n          side: {}\n",
                       SideName(s.side));
    out += Annotations(o, s);
  }
  return out;
}

}  // namespace

std::string SeriesName(const std::string& what, int window_days) {
  if (what == "avg5m") return "gpuscope:workload_signal:avg5m";
  return fmt::format("gpuscope:workload_signal:{}_{}d", what, window_days);
}

Status ValidateRuleOptions(const RuleOptions& o) {
  if (o.signals.empty()) return Status::InvalidArgument("no signals to baseline");
  if (o.window_days < 1 || o.window_days > 90) {
    return Status::InvalidArgument("window must be 1 to 90 days");
  }
  if (o.warmup_days < 1 || o.warmup_days > o.window_days) {
    return Status::InvalidArgument("warm-up must be 1 day to the window");
  }
  if (!(o.k > 0) || !std::isfinite(o.k)) return Status::InvalidArgument("k must be > 0");
  if (o.sustain_minutes < 5 || o.sustain_minutes % 5 != 0) {
    return Status::InvalidArgument("sustain must be a multiple of 5 minutes, at least 5");
  }
  if (o.baseline_interval_minutes < 5 || o.baseline_interval_minutes > 24 * 60) {
    return Status::InvalidArgument("baseline interval must be 5 minutes to 1 day");
  }
  std::set<std::string> names, alerts;
  for (const Signal& s : o.signals) {
    if (!names.insert(s.name).second) {
      return Status::InvalidArgument("signal \"" + s.name + "\" given twice");
    }
    if (s.bad != Direction::kNone && !alerts.insert(AlertName(s)).second) {
      return Status::InvalidArgument("alert \"" + AlertName(s) + "\" given twice");
    }
  }
  return Status::Ok();
}

Result<std::string> RenderRules(const RuleOptions& o) {
  GPUSCOPE_RETURN_IF_ERROR(ValidateRuleOptions(o));
  std::string out = fmt::format(
      "# GENERATED by `gpuscope baseline rules` (src/baseline/rules.cc): per-workload\n"
      "# baselines over {} days of 5-minute aggregates, alerts at {} spreads sustained\n"
      "# {} minutes, silent during {} days of warm-up. Design: docs/baselines.md.\n"
      "# Regenerate: build/release/gpuscope baseline rules > "
      "deploy/prometheus/rules/gpu-baselines.yml\n"
      "groups:\n",
      o.window_days, o.k, o.sustain_minutes, o.warmup_days);
  return out + FiveMinuteGroup(o) + WindowGroup(o) + AlertGroup(o);
}

}  // namespace gpuscope::baseline
