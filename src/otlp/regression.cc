#include "otlp/regression.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "export/builtin_families.h"

namespace gpuscope::otlp {
namespace {

// The last totals at or before `t` (the first ones when all are later).
template <typename T>
const T& At(const std::vector<T>& totals, double t) {
  auto it = std::upper_bound(totals.begin(), totals.end(), t,
                             [](double v, const auto& x) { return v < x.t; });
  return it == totals.begin() ? *it : *std::prev(it);
}

std::string Seconds(double s) {
  return s < 1 ? fmt::format("{:.0f} ms", s * 1000) : fmt::format("{:.2f} s", s);
}

std::string Span(double s) {
  return s >= 120 ? fmt::format("{:.0f} min", s / 60) : fmt::format("{:.0f} s", s);
}

}  // namespace

void RegressionTracker::Update(const std::vector<KpiReading>& readings, double now) {
  std::map<Key, Totals> sums;
  std::map<Key, Kpi> kpis;
  for (const KpiReading& r : readings) {
    Key key{r.family, r.rank, r.workload};
    Totals& t = sums[key];
    t.t = now;
    t.count += r.count;
    t.sum += r.sum;
    kpis[key] = r.kpi;
  }
  std::erase_if(history_, [&](const auto& e) { return !sums.contains(e.first); });
  untracked_ = 0;
  for (auto& [key, totals] : sums) {
    auto it = history_.find(key);
    if (it == history_.end()) {
      if (history_.size() >= options_.max_keys) {
        ++untracked_;
        continue;
      }
      it = history_.emplace(key, History{}).first;
    }
    it->second.kpi = kpis[key];
    Record(it->second, totals, now);
  }
}

void RegressionTracker::Record(History& h, const Totals& totals, double now) const {
  if (!h.totals.empty() && totals.count < h.totals.back().count) {  // a reset
    h.totals.clear();
    h.coarse = 0;
  }
  const std::size_t max_points = std::max<std::size_t>(options_.max_points, 16);
  const std::size_t fine_points = max_points / 8;
  const double fine = options_.recent_s / static_cast<double>(fine_points - 2);
  const double keep = options_.baseline_s + options_.recent_s;
  const double coarse = keep / static_cast<double>(max_points - fine_points - 2);
  const std::size_t n = h.totals.size();
  if (n >= 2 && h.totals.back().t - h.totals[n - 2].t < fine) {
    h.totals.back() = totals;
  } else {
    h.totals.push_back(totals);
  }
  // A total before the last one at or before now - recent_s (where the recent span starts)
  // can only start a baseline from now on: keep those `coarse` apart.
  while (h.coarse + 1 < h.totals.size() && h.totals[h.coarse + 1].t <= now - options_.recent_s) {
    if (h.coarse > 0 && h.totals[h.coarse].t - h.totals[h.coarse - 1].t < coarse) {
      h.totals.erase(h.totals.begin() + static_cast<std::ptrdiff_t>(h.coarse));
    } else {
      ++h.coarse;
    }
  }
  std::size_t drop = 0;
  while (drop + 1 < h.totals.size() &&
         (h.totals[drop].t < now - keep || h.totals.size() - drop > max_points)) {
    ++drop;
  }
  h.totals.erase(h.totals.begin(), h.totals.begin() + static_cast<std::ptrdiff_t>(drop));
  h.coarse -= std::min(h.coarse, drop);
}

std::size_t RegressionTracker::points() const {
  std::size_t n = 0;
  for (const auto& [key, h] : history_) n += h.totals.size();
  return n;
}

std::vector<KpiFinding> RegressionTracker::Evaluate(
    double now, const std::vector<std::vector<std::string>>& causes) const {
  std::vector<KpiFinding> out;
  for (const auto& [key, h] : history_) {
    if (h.totals.size() < 3) continue;
    const Totals& last = h.totals.back();
    const Totals& split = At(h.totals, now - options_.recent_s);
    const Totals& first = At(h.totals, now - options_.recent_s - options_.baseline_s);
    const double recent_span = last.t - split.t, baseline_span = split.t - first.t;
    const double recent_n = last.count - split.count, baseline_n = split.count - first.count;
    if (baseline_span < recent_span || recent_span <= 0 || recent_n < options_.min_count ||
        baseline_n < options_.min_count) {
      continue;
    }
    KpiFinding f;
    std::tie(f.family, f.rank, f.workload) = key;
    f.kpi = h.kpi;
    f.recent = (last.sum - split.sum) / recent_n;
    f.baseline = (split.sum - first.sum) / baseline_n;
    if (!(f.baseline > 0)) continue;
    f.change = f.recent / f.baseline - 1;
    f.regressed =
        HigherIsWorse(f.kpi) ? f.change >= options_.min_change : f.change <= -options_.min_change;
    if (f.rank >= 0 && static_cast<std::size_t>(f.rank) < causes.size()) f.causes = causes[f.rank];
    std::string cause = "no GPU cause found";
    if (!f.causes.empty()) {
      cause = "coincides with " + fmt::format("{}", fmt::join(f.causes, ", ")) + " on this GPU";
    }
    f.verdict = fmt::format(
        "kpi_regression: {} of {} {} {:.0f}% ({} -> {}, last {} against the "
        "{} before); {}",
        KpiName(f.kpi), f.workload.empty() ? "the application" : f.workload,
        f.change >= 0 ? "rose" : "fell", std::fabs(f.change) * 100, Seconds(f.baseline),
        Seconds(f.recent), Span(recent_span), Span(baseline_span),
        f.regressed ? cause : "within its usual range");
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<prom::Family> RegressionTracker::Families(const std::vector<KpiFinding>& findings) {
  prom::Family active = prom::MakeFamily(prom::kKpiRegression);
  prom::Family change = prom::MakeFamily(prom::kKpiChange);
  for (const KpiFinding& f : findings) {
    prom::Labels labels = {{"kpi", std::string(KpiName(f.kpi))}, {"workload", f.workload}};
    change.samples.push_back({f.rank, labels, f.change});
    std::string cause = f.causes.empty() ? "none" : fmt::format("{}", fmt::join(f.causes, ","));
    labels.emplace_back("cause", f.regressed ? cause : "");
    active.samples.push_back({f.rank, labels, f.regressed ? 1.0 : 0.0});
  }
  std::vector<prom::Family> out;
  if (!active.samples.empty()) out.push_back(std::move(active));
  if (!change.samples.empty()) out.push_back(std::move(change));
  return out;
}

}  // namespace gpuscope::otlp
