#include "analysis/window_stats.h"

#include <algorithm>
#include <cmath>

namespace gpuscope::analysis {

void Series::Push(double time, double value, double seconds, double min, double max, double stddev,
                  double offset) {
  // Keep the optional vectors aligned with t and v once one is used.
  const bool plain = seconds == 0 && min == value && max == value && stddev == 0 && offset == 0;
  if (plain && w.empty()) {
    t.push_back(time), v.push_back(value);
    return;
  }
  while (w.size() < v.size()) {
    const std::size_t i = w.size();
    w.push_back(0), lo.push_back(v[i]), hi.push_back(v[i]), sd.push_back(0), mid.push_back(0);
  }
  t.push_back(time), v.push_back(value);
  w.push_back(seconds), lo.push_back(min), hi.push_back(max), sd.push_back(stddev);
  mid.push_back(offset);
}

void Series::Reserve(std::size_t n) {
  for (std::vector<double>* column : {&t, &v, &w, &lo, &hi, &sd, &mid}) column->reserve(n);
}

Series Extract(std::span<const WindowPoint> points, Metric m, double scale) {
  Series s;
  s.Reserve(points.size());
  for (const WindowPoint& p : points) {
    if (!p.Has(m)) continue;
    // A bucket's gauge is the mean over its time; a counter its value at t.
    const bool mean = p.samples > 1 && Def(m).native.type != MetricType::kCounter &&
                      Def(m).dcgm.type != MetricType::kCounter;
    s.Push(p.t, p.Get(m) * scale, p.seconds, p.Min(m) * scale, p.Max(m) * scale,
           p.Stddev(m) * std::abs(scale), mean ? p.seconds / 2.0 : 0);
  }
  return s;
}

Series Filter(const Series& s, const std::vector<bool>& keep) {
  Series out;
  out.Reserve(s.size());
  for (std::size_t i = 0; i < s.size() && i < keep.size(); ++i) {
    if (keep[i]) out.Push(s.t[i], s.v[i], s.W(i), s.Lo(i), s.Hi(i), s.Sd(i), s.At(i) - s.t[i]);
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
  const double spacing = MedianSpacing(s);
  double total = 0, sum = 0;
  out.min = s.Lo(0), out.max = s.Hi(0);
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double w = Weight(s, i, spacing);
    total += w, sum += w * s.v[i];
    out.min = std::min(out.min, s.Lo(i)), out.max = std::max(out.max, s.Hi(i));
  }
  out.mean = total > 0 ? sum / total : s.v.back();
  double sq = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double d = s.v[i] - out.mean, sd = s.Sd(i);
    sq += Weight(s, i, spacing) * (d * d + sd * sd);
  }
  out.stddev = total > 0 ? std::sqrt(sq / total) : 0;
  return out;
}

LinearFit FitLine(const Series& s) {
  LinearFit fit;
  fit.n = s.size();
  if (s.empty()) return fit;
  // Centre time for numerical stability (unix seconds are ~1.7e9).
  const double spacing = MedianSpacing(s);
  double total = 0, tm = 0, vm = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double w = Weight(s, i, spacing);
    total += w, tm += w * s.At(i), vm += w * s.v[i];
  }
  if (total <= 0) return fit;
  tm /= total;
  vm /= total;
  double stt = 0, stv = 0, svv = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double w = Weight(s, i, spacing), dt = s.At(i) - tm, dv = s.v[i] - vm;
    stt += w * dt * dt, stv += w * dt * dv, svv += w * dv * dv;
  }
  fit.slope = stt > 0 ? stv / stt : 0;
  fit.intercept = vm - fit.slope * tm;
  // A flat series is explained perfectly by a flat line.
  fit.r2 = svv > 0 ? std::clamp(stv * stv / (stt * svv), 0.0, 1.0) : 1.0;
  if (stt <= 0) fit.r2 = 0;
  return fit;
}

std::pair<double, double> HeadTailMeans(const Series& s, double share) {
  if (s.empty()) return {0, 0};
  const double spacing = MedianSpacing(s);
  double total = 0;
  for (std::size_t i = 0; i < s.size(); ++i) total += Weight(s, i, spacing);
  const double want = std::max(total * share, 1e-9);
  auto mean_over = [&](bool from_end) {
    double took = 0, sum = 0;
    for (std::size_t k = 0; k < s.size() && took < want; ++k) {
      const std::size_t i = from_end ? s.size() - 1 - k : k;
      const double w = std::min(Weight(s, i, spacing), want - took);
      took += w, sum += w * s.v[i];
    }
    return took > 0 ? sum / took : s.v.front();
  };
  return {mean_over(false), mean_over(true)};
}

double TrimmedStddev(const Series& s, double trim) {
  if (s.empty()) return 0;
  const double spacing = MedianSpacing(s);
  std::vector<std::size_t> order(s.size());
  double total = 0;
  for (std::size_t i = 0; i < s.size(); ++i) order[i] = i, total += Weight(s, i, spacing);
  std::sort(order.begin(), order.end(),
            [&s](std::size_t a, std::size_t b) { return s.v[a] < s.v[b]; });
  // Each point keeps the part of its time that lies inside [trim, 1 - trim]
  // of the total, in value order.
  const double lo = trim * total, hi = (1 - trim) * total;
  std::vector<double> kept(s.size());
  double below = 0, sum = 0, weight = 0;
  for (std::size_t i : order) {
    const double w = Weight(s, i, spacing);
    kept[i] = std::max(0.0, std::min(below + w, hi) - std::max(below, lo));
    below += w, sum += kept[i] * s.v[i], weight += kept[i];
  }
  if (weight <= 0) return 0;
  const double mean = sum / weight;
  double sq = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double d = s.v[i] - mean, sd = s.Sd(i);
    sq += kept[i] * (d * d + sd * sd);
  }
  return std::sqrt(sq / weight);
}

std::optional<double> RiseOnset(const Series& s, double min_rise, double min_side) {
  if (s.size() < 2) return std::nullopt;
  const double spacing = MedianSpacing(s);
  double total = 0, sum = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double w = Weight(s, i, spacing);
    total += w, sum += w * s.v[i];
  }
  std::optional<double> best_t;
  double best = 0, before_w = 0, before_sum = 0;
  for (std::size_t k = 1; k < s.size(); ++k) {
    const double w = Weight(s, k - 1, spacing);
    before_w += w, before_sum += w * s.v[k - 1];
    const double after_w = total - before_w;
    if (after_w < min_side) break;
    if (before_w < min_side) continue;
    const double rise = (sum - before_sum) / after_w - before_sum / before_w;
    const double score = rise * std::sqrt(before_w * after_w) / total;
    if (rise >= min_rise && score > best) best = score, best_t = s.t[k];
  }
  return best_t;
}

std::optional<std::size_t> TwoLineSplit(const Series& s, double min_tail) {
  if (s.size() < 6) return std::nullopt;
  const double spacing = MedianSpacing(s), t0 = s.At(0);
  // Prefix sums of the weighted moments, time centred on the first point.
  const std::size_t n = s.size();
  std::vector<double> w(n + 1), wt(n + 1), wv(n + 1), wtt(n + 1), wtv(n + 1), wvv(n + 1);
  for (std::size_t i = 0; i < n; ++i) {
    const double a = Weight(s, i, spacing), t = s.At(i) - t0, v = s.v[i];
    w[i + 1] = w[i] + a, wt[i + 1] = wt[i] + a * t, wv[i + 1] = wv[i] + a * v;
    wtt[i + 1] = wtt[i] + a * t * t, wtv[i + 1] = wtv[i] + a * t * v;
    wvv[i + 1] = wvv[i] + a * v * v;
  }
  // Residual sum of squares of the weighted line over [from, to).
  auto sse = [&](std::size_t from, std::size_t to) {
    const double sw = w[to] - w[from];
    if (sw <= 0 || to - from < 2) return 0.0;
    const double mt = (wt[to] - wt[from]) / sw, mv = (wv[to] - wv[from]) / sw;
    const double stt = wtt[to] - wtt[from] - sw * mt * mt;
    const double stv = wtv[to] - wtv[from] - sw * mt * mv;
    const double svv = wvv[to] - wvv[from] - sw * mv * mv;
    return std::max(0.0, stt > 0 ? svv - stv * stv / stt : svv);
  };
  std::optional<std::size_t> best;
  double best_sse = 0;
  const double end = s.t.back() + Weight(s, n - 1, spacing);
  for (std::size_t k = 3; k + 3 <= n; ++k) {
    if (end - s.t[k] < min_tail) break;
    const double total = sse(0, k) + sse(k, n);
    if (!best || total < best_sse) best = k, best_sse = total;
  }
  return best;
}

double MedianSpacing(const Series& s) {
  if (s.size() < 2) return 0;
  std::vector<double> d;
  for (std::size_t i = 1; i < s.size(); ++i) d.push_back(s.t[i] - s.t[i - 1]);
  std::nth_element(d.begin(), d.begin() + d.size() / 2, d.end());
  return d[d.size() / 2];
}

double Weight(const Series& s, std::size_t i, double spacing) {
  if (s.W(i) > 0) return s.W(i);
  if (i + 1 < s.size()) return s.t[i + 1] - s.t[i];
  return spacing > 0 ? spacing : 1.0;
}

namespace {

// Share of point i's time during which `c` held (see ShareWhere).
double HeldShare(const Series& s, std::size_t i, Condition c) {
  const double lo = s.Lo(i), hi = s.Hi(i);
  if (c.Holds(lo) == c.Holds(hi)) return c.Holds(s.v[i]) ? 1 : 0;
  const double low_share = hi > lo ? std::clamp((hi - s.v[i]) / (hi - lo), 0.0, 1.0) : 0.5;
  return c.below ? low_share : 1 - low_share;
}

}  // namespace

double ShareWhere(const Series& s, Condition c) {
  if (s.empty()) return 0;
  double spacing = MedianSpacing(s), total = 0, hit = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    double w = Weight(s, i, spacing);
    total += w;
    hit += w * HeldShare(s, i, c);
  }
  return total > 0 ? hit / total : 0;
}

Series Indicator(const Series& s, Condition c) {
  Series out;
  out.Reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const double held = HeldShare(s, i, c);
    out.Push(s.t[i], held, s.W(i), held, held, 0);
  }
  return out;
}

int CountRuns(const Series& s, Condition c) {
  int runs = 0;
  bool in = false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool lo = c.Holds(s.Lo(i)), hi = c.Holds(s.Hi(i));
    if ((lo || hi) && !in) ++runs;
    in = lo && hi;  // a straddling bucket may end outside the run
  }
  return runs;
}

double TrailingRunSeconds(const Series& s, Condition c) {
  auto throughout = [&](std::size_t i) { return c.Holds(s.Lo(i)) && c.Holds(s.Hi(i)); };
  if (s.empty() || !throughout(s.size() - 1)) return 0;
  std::size_t first = s.size() - 1;
  while (first > 0 && throughout(first - 1)) --first;
  const double spacing = MedianSpacing(s);
  double seconds = s.t.back() - s.t[first] + Weight(s, s.size() - 1, spacing);
  // A bucket just before the run that held `c` for part of its time: the run
  // began inside it, its held share at its end (exact for a step).
  if (first > 0) seconds += HeldShare(s, first - 1, c) * Weight(s, first - 1, spacing);
  return seconds;
}

std::optional<double> CounterRate(std::span<const WindowPoint> points, Metric m) {
  Series s = Extract(points, m);
  if (s.size() < 2) return std::nullopt;
  double dt = s.t.back() - s.t.front();
  if (dt <= 0) return std::nullopt;
  return std::max(0.0, (s.v.back() - s.v.front()) / dt);
}

std::optional<double> ReasonShare(std::span<const WindowPoint> points, uint64_t mask) {
  Series s = Extract(points, Metric::kClockReasons);
  if (s.empty()) return std::nullopt;
  double spacing = MedianSpacing(s), total = 0, hit = 0;
  std::size_t i = 0;
  for (const WindowPoint& p : points) {
    if (!p.Has(Metric::kClockReasons)) continue;
    // The union of the bits' times is at least the longest of them (equal
    // when they overlap, as software and hardware thermal slowdown do).
    double share = 0;
    for (unsigned bit = 0; bit < 64; ++bit) {
      if (mask >> bit & 1) share = std::max(share, p.BitTimeShare(Metric::kClockReasons, bit));
    }
    const double w = Weight(s, i++, spacing);
    total += w, hit += w * share;
  }
  return total > 0 ? hit / total : 0;
}

}  // namespace gpuscope::analysis
