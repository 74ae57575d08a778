// Statistics over window series for the diagnosis: means and spreads, shares
// of time a condition held, runs (gaps), least-squares trends, counter rates
// and clock-reason bit shares.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "gpuscope/window.h"

namespace gpuscope::analysis {

// One metric's present values over time, oldest first.
struct Series {
  std::vector<double> t, v;
  bool empty() const { return v.empty(); }
  std::size_t size() const { return v.size(); }
};

struct Summary {
  std::size_t n = 0;
  double mean = 0, stddev = 0, min = 0, max = 0;
};

struct LinearFit {
  std::size_t n = 0;
  double slope = 0;      // value units per second
  double intercept = 0;  // value at t = 0
  double r2 = 0;         // coefficient of determination; 1 for a flat exact series
  double At(double t) const { return intercept + slope * t; }
};

// The present values of `m`, multiplied by `scale`.
Series Extract(const std::vector<WindowPoint>& points, Metric m, double scale = 1);
// The points of `s` whose index is selected by `keep` (same length as s).
Series Filter(const Series& s, const std::vector<bool>& keep);
// The points of `s` with t >= since.
Series Since(const Series& s, double since);

Summary Summarize(const Series& s);
LinearFit FitLine(const Series& s);

// Time-weighted share of the series span where pred holds (each point stands
// for the interval up to the next one; the last for the median spacing).
double ShareWhere(const Series& s, const std::function<bool(double)>& pred);
// Number of maximal runs of consecutive points where pred holds.
int CountRuns(const Series& s, const std::function<bool(double)>& pred);
// Seconds from the start of the trailing run where pred holds to the last
// point (plus one spacing); 0 when the last point fails pred.
double TrailingRunSeconds(const Series& s, const std::function<bool(double)>& pred);

// Increase per second of a cumulative counter between its first and last
// present points; nullopt with fewer than two or no time between them.
std::optional<double> CounterRate(const std::vector<WindowPoint>& points, Metric m);
// Share of the span during which any bit of `mask` was set in kClockReasons;
// nullopt when the bitmask is absent.
std::optional<double> ReasonShare(const std::vector<WindowPoint>& points, uint64_t mask);

// Median spacing of the series (seconds); 0 with fewer than two points.
double MedianSpacing(const Series& s);

}  // namespace gpuscope::analysis
