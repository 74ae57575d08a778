#include "analysis/diagnosis.h"

#include <algorithm>

#include "analysis/rules.h"
#include "analysis/rules_table.h"
#include "analysis/signals.h"

namespace gpuscope::analysis {
namespace {

void Add(std::vector<Finding>& out, std::optional<Finding> f) {
  if (f) out.push_back(std::move(*f));
}

bool Enough(std::span<const WindowPoint> used, const DiagnoseOptions& options) {
  return used.size() >= 2 && used.back().t - used.front().t >= options.min_span_seconds;
}

// The first idle rule that fires, in evaluation order.
std::optional<Finding> IdleFinding(const Signals& s, const DiagnoseOptions& options) {
  for (FindingKind k : kEvaluationOrder) {
    const Rule& r = RuleFor(k);
    if (r.stage != Stage::kIdle) continue;
    if (std::optional<Finding> f = r.detect(s, options)) return f;
  }
  return std::nullopt;
}

// `r` over the window, else (Rule::recent) over its recent horizons, longest
// first, so a state that began a minute ago is not diluted by the minutes
// before it.
std::optional<Finding> OverHorizons(const Rule& r, const Signals& s,
                                    const std::vector<RecentSignals>& recent,
                                    const DiagnoseOptions& options) {
  std::optional<Finding> f = r.detect(s, options);
  for (std::size_t i = 0; !f && r.recent && i < recent.size(); ++i) {
    f = r.detect(recent[i].signals, recent[i].options);
  }
  return f;
}

// The limit rules, then the healthy ones unless a limit was found on any
// horizon (a GPU starved or throttled lately is not healthy, however
// saturated its window or its last 30 s looks).
std::vector<Finding> WorkingFindings(const Signals& s, const std::vector<RecentSignals>& recent,
                                     const DiagnoseOptions& options) {
  std::vector<Finding> out;
  for (FindingKind k : kEvaluationOrder) {
    if (RuleFor(k).stage == Stage::kLimit) Add(out, OverHorizons(RuleFor(k), s, recent, options));
  }
  if (std::any_of(out.begin(), out.end(),
                  [](const Finding& f) { return RuleFor(f.kind).limits; })) {
    return out;
  }
  for (FindingKind k : kEvaluationOrder) {
    if (RuleFor(k).stage == Stage::kHealthy) Add(out, OverHorizons(RuleFor(k), s, recent, options));
  }
  return out;
}

}  // namespace

std::string_view KindName(FindingKind kind) { return RuleFor(kind).name; }

std::optional<FindingKind> KindFromName(std::string_view name) {
  for (const Rule& r : kRules) {
    if (r.name == name) return r.kind;
  }
  return std::nullopt;
}

const Finding* FindKind(const std::vector<Finding>& findings, FindingKind kind) {
  for (const Finding& f : findings) {
    if (f.kind == kind) return &f;
  }
  return nullptr;
}

Judgement JudgeTrailing(const GpuInfo& info, std::span<const WindowPoint> used,
                        const GpuSample& latest, const DiagnoseOptions& options) {
  if (!Enough(used, options)) return {};
  Signals s = ComputeSignals(info, used, latest, options);
  std::vector<Finding> out;
  if (std::optional<Finding> idle = IdleFinding(s, options)) {
    // An idle GPU has no bottleneck; only a rule marked when_idle (a degraded
    // link) is still worth saying.
    out.push_back(std::move(*idle));
    for (FindingKind k : kEvaluationOrder) {
      if (RuleFor(k).when_idle) Add(out, RuleFor(k).detect(s, options));
    }
  } else {
    out = WorkingFindings(s, ComputeRecentSignals(info, used, latest, options), options);
  }
  for (Finding& f : out) {
    f.since = s.OnsetOf(RuleFor(f.kind).onset);
    f.since_seconds = std::max(0.0, s.end - f.since);
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Finding& a, const Finding& b) { return a.confidence > b.confidence; });
  Judgement j{std::move(out), {}};
  if (j.findings.empty()) j.activity = DescribeLoad(s, options);
  return j;
}

std::vector<Finding> Diagnose(const GpuInfo& info, std::span<const WindowPoint> points,
                              const GpuSample& latest, const DiagnoseOptions& options) {
  return JudgeTrailing(info, TrailingPoints(points, options.window_seconds), latest, options)
      .findings;
}

}  // namespace gpuscope::analysis
