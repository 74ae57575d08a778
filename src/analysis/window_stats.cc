#include "analysis/window_stats.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {

Series Extract(const std::vector<WindowPoint>& points, Metric m, double scale) {
  Series s;
  for (const WindowPoint& p : points) {
    if (!p.Has(m)) continue;
    s.t.push_back(p.t);
    s.v.push_back(p.Get(m) * scale);
  }
  return s;
}

Series Filter(const Series& s, const std::vector<bool>& keep) {
  Series out;
  for (std::size_t i = 0; i < s.size() && i < keep.size(); ++i) {
    if (!keep[i]) continue;
    out.t.push_back(s.t[i]);
    out.v.push_back(s.v[i]);
  }
  return out;
}

Series Since(const Series& s, double since) {
  std::vector<bool> keep(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) keep[i] = s.t[i] >= since;
  return Filter(s, keep);
}

Summary Summarize(const Series& s) {
  Summary out;
  out.n = s.size();
  if (s.empty()) return out;
  out.min = *std::min_element(s.v.begin(), s.v.end());
  out.max = *std::max_element(s.v.begin(), s.v.end());
  double sum = 0;
  for (double v : s.v) sum += v;
  out.mean = sum / static_cast<double>(out.n);
  double sq = 0;
  for (double v : s.v) sq += (v - out.mean) * (v - out.mean);
  out.stddev = std::sqrt(sq / static_cast<double>(out.n));
  return out;
}

LinearFit FitLine(const Series& s) {
  LinearFit fit;
  fit.n = s.size();
  if (s.empty()) return fit;
  // Centre time for numerical stability (unix seconds are ~1.7e9).
  double tm = 0, vm = 0;
  for (std::size_t i = 0; i < s.size(); ++i) tm += s.t[i], vm += s.v[i];
  tm /= static_cast<double>(s.size());
  vm /= static_cast<double>(s.size());
  double stt = 0, stv = 0, svv = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    double dt = s.t[i] - tm, dv = s.v[i] - vm;
    stt += dt * dt, stv += dt * dv, svv += dv * dv;
  }
  fit.slope = stt > 0 ? stv / stt : 0;
  fit.intercept = vm - fit.slope * tm;
  // A flat series is explained perfectly by a flat line.
  fit.r2 = svv > 0 ? std::clamp(stv * stv / (stt * svv), 0.0, 1.0) : 1.0;
  if (stt <= 0) fit.r2 = 0;
  return fit;
}

double MedianSpacing(const Series& s) {
  if (s.size() < 2) return 0;
  std::vector<double> d;
  for (std::size_t i = 1; i < s.size(); ++i) d.push_back(s.t[i] - s.t[i - 1]);
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

namespace {

// The interval each point stands for: up to the next point; the last one
// for the median spacing (1 s when there is only one point).
double Weight(const Series& s, std::size_t i, double spacing) {
  if (i + 1 < s.size()) return s.t[i + 1] - s.t[i];
  return spacing > 0 ? spacing : 1.0;
}

}  // namespace

double ShareWhere(const Series& s, const std::function<bool(double)>& pred) {
  if (s.empty()) return 0;
  double spacing = MedianSpacing(s), total = 0, hit = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    double w = Weight(s, i, spacing);
    total += w;
    if (pred(s.v[i])) hit += w;
  }
  return total > 0 ? hit / total : 0;
}

int CountRuns(const Series& s, const std::function<bool(double)>& pred) {
  int runs = 0;
  bool in = false;
  for (double v : s.v) {
    bool now = pred(v);
    if (now && !in) ++runs;
    in = now;
  }
  return runs;
}

double TrailingRunSeconds(const Series& s, const std::function<bool(double)>& pred) {
  if (s.empty() || !pred(s.v.back())) return 0;
  std::size_t first = s.size() - 1;
  while (first > 0 && pred(s.v[first - 1])) --first;
  double spacing = MedianSpacing(s);
  return s.t.back() - s.t[first] + (spacing > 0 ? spacing : 1.0);
}

std::optional<double> CounterRate(const std::vector<WindowPoint>& points, Metric m) {
  Series s = Extract(points, m);
  if (s.size() < 2) return std::nullopt;
  double dt = s.t.back() - s.t.front();
  if (dt <= 0) return std::nullopt;
  return std::max(0.0, (s.v.back() - s.v.front()) / dt);
}

std::optional<double> ReasonShare(const std::vector<WindowPoint>& points, uint64_t mask) {
  Series s = Extract(points, Metric::kClockReasons);
  if (s.empty()) return std::nullopt;
  return ShareWhere(
      s, [mask](double v) { return (static_cast<uint64_t>(std::llround(v)) & mask) != 0; });
}

}  // namespace gpuscope::analysis
