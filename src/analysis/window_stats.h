// Statistics over window series for the diagnosis: means and spreads, shares
// of time a condition held, runs (gaps), least-squares trends, counter rates
// and clock-reason bit shares.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "gpuscope/window.h"

namespace gpuscope::analysis {

// One metric's present values over time, oldest first. A window bucket
// (include/gpuscope/window.h) brings the seconds it stands for and its
// extremes and spread; the optional vectors are empty, or shorter, for plain
// samples (w 0: the spacing to the next; lo = hi = v; sd 0).
struct Series {
  std::vector<double> t, v;
  std::vector<double> w, lo, hi, sd;
  std::vector<double> mid;  // seconds from t to when the value holds: a bucket's mean, half
  bool empty() const { return v.empty(); }
  std::size_t size() const { return v.size(); }
  double W(std::size_t i) const { return i < w.size() ? w[i] : 0; }
  double Lo(std::size_t i) const { return i < lo.size() ? lo[i] : v[i]; }
  double Hi(std::size_t i) const { return i < hi.size() ? hi[i] : v[i]; }
  double Sd(std::size_t i) const { return i < sd.size() ? sd[i] : 0; }
  double At(std::size_t i) const { return t[i] + (i < mid.size() ? mid[i] : 0); }
  // Appends a value standing for `seconds` (0: until the next), with its
  // extremes and spread; a mean over the interval holds `offset` after time.
  void Push(double time, double value, double seconds, double min, double max, double stddev,
            double offset = 0);
  void Push(double time, double value) { Push(time, value, 0, value, value, 0); }
  // Room for n points in every vector (a diagnosis extracts many series).
  void Reserve(std::size_t n);
};

// A threshold condition on values: v < threshold (below) or v >= threshold.
struct Condition {
  double threshold = 0;
  bool below = true;
  bool Holds(double v) const { return below ? v < threshold : v >= threshold; }
};
inline Condition Below(double threshold) { return {threshold, true}; }
inline Condition AtLeast(double threshold) { return {threshold, false}; }

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
Series Extract(std::span<const WindowPoint> points, Metric m, double scale = 1);
// The points of `s` whose index is selected by `keep` (same length as s).
Series Filter(const Series& s, const std::vector<bool>& keep);
// The points of `s` with t >= since.
Series Since(const Series& s, double since);

// Every point weighs the time it stands for (Weight): mean and standard
// deviation are time-weighted (a bucket's own spread included), min and max
// come from the extremes.
Summary Summarize(const Series& s);
// Weighted least squares, each point by the time it stands for, at the time
// its value holds (a bucket's middle).
LinearFit FitLine(const Series& s);
// Time-weighted means of the first and of the last `share` of the series's
// time (the clock at the start and at the end of a window).
std::pair<double, double> HeadTailMeans(const Series& s, double share);

// Seconds point i stands for: its w, else the spacing to the next point; the
// last one's the median spacing (1 s when there is only one point).
double Weight(const Series& s, std::size_t i, double spacing);

// Time-weighted share of the series span where `c` holds. A bucket that
// straddles the threshold counts the share a signal switching between its
// min and max with its mean would spend there: exact for two-level signals
// (busy and idle stretches), an estimate otherwise.
double ShareWhere(const Series& s, Condition c);
// The series with each value replaced by the share of its time where `c`
// held (0..1; see ShareWhere), for RiseOnset.
Series Indicator(const Series& s, Condition c);
// Number of maximal runs of consecutive points where `c` holds; a bucket
// that straddles the threshold holds at least one run start.
int CountRuns(const Series& s, Condition c);
// Seconds from the start of the trailing run where `c` holds throughout to
// the end of the last point, plus the held share of a bucket just before it
// (the run began inside that bucket); 0 when the last point fails it.
double TrailingRunSeconds(const Series& s, Condition c);

// Increase per second of a cumulative counter between its first and last
// present points; nullopt with fewer than two or no time between them.
std::optional<double> CounterRate(std::span<const WindowPoint> points, Metric m);
// Share of the span during which any bit of `mask` was set in kClockReasons
// (in a bucket: the longest share of time of those bits); nullopt when the
// bitmask is absent.
std::optional<double> ReasonShare(std::span<const WindowPoint> points, uint64_t mask);

// Time-weighted standard deviation of the values once the lowest and the
// highest `trim` share of the series's time are dropped (a bucket's own
// spread counts for the points kept): one short stall or spike does not make
// a steady series look unsteady, a series that keeps moving stays wide.
double TrimmedStddev(const Series& s, double trim);

// The change point of a mean shift upwards: the start of the trailing
// segment whose time-weighted mean exceeds that of the points before it the
// most (weighted by how evenly the split cuts the series), when it rises by
// at least `min_rise`, with at least `min_side` seconds on either side;
// nullopt when no split does (the level held, or not, throughout).
std::optional<double> RiseOnset(const Series& s, double min_rise, double min_side);

// The least-squares split of the series into two lines: the index where the
// second one starts, chosen among those that leave at least `min_tail`
// seconds after it; nullopt with too few points.
std::optional<std::size_t> TwoLineSplit(const Series& s, double min_tail);

// Median spacing of the series (seconds); 0 with fewer than two points.
double MedianSpacing(const Series& s);

}  // namespace gpuscope::analysis
