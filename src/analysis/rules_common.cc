#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analysis/mig.h"
#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

// A criterion just at its threshold is a coin flip made better than even by
// the other criteria; one cleared by its full margin is certain.
constexpr double kScoreAtThreshold = 0.5;
// A window shorter than requested weakens every finding, down to this factor
// for a window of min_span_seconds.
constexpr double kMinCoverageFactor = 0.6;

}  // namespace

FindingBuilder::FindingBuilder(FindingKind kind, const Signals& signals,
                               const DiagnoseOptions& options)
    : rule_(RuleFor(kind)),
      from_parent_(!signals.parent.empty() && InheritedFromParent(rule_)),
      signals_(signals),
      options_(options) {
  finding_.kind = kind;
}

std::string FindingBuilder::Named(const std::string& signal) const {
  return from_parent_ ? "parent_" + signal : signal;
}

bool FindingBuilder::Record(const std::string& signal, double value, const std::string& cmp,
                            double threshold, double full, const std::string& unit, bool met,
                            double margin) {
  finding_.evidence.push_back({Named(signal), value, cmp, threshold, unit, met});
  if (met) {
    double m = full > 0 ? std::clamp(margin / full, 0.0, 1.0) : 1.0;
    scores_.push_back(kScoreAtThreshold + (1 - kScoreAtThreshold) * m);
  }
  return met;
}

bool FindingBuilder::AtLeast(const std::string& signal, double value, double threshold, double full,
                             const std::string& unit) {
  return Record(signal, value, ">=", threshold, full, unit, value >= threshold, value - threshold);
}

bool FindingBuilder::AtMost(const std::string& signal, double value, double threshold, double full,
                            const std::string& unit) {
  return Record(signal, value, "<=", threshold, full, unit, value <= threshold, threshold - value);
}

bool FindingBuilder::Below(const std::string& signal, double value, double threshold, double full,
                           const std::string& unit) {
  return Record(signal, value, "<", threshold, full, unit, value < threshold, threshold - value);
}

void FindingBuilder::Note(const std::string& signal, double value, const std::string& unit) {
  finding_.evidence.push_back({Named(signal), value, "", 0, unit, true});
}

void FindingBuilder::Uses(Metric metric) {
  std::string key(Def(metric).key);
  auto& s = finding_.signals;
  if (std::find(s.begin(), s.end(), key) == s.end()) s.push_back(std::move(key));
}

Finding FindingBuilder::Build(const std::string& detail) const {
  return Build(detail, rule_.action);
}

Finding FindingBuilder::Build(const std::string& detail, std::string_view action) const {
  Finding f = finding_;
  double margin = 1;
  if (!scores_.empty()) {
    double sum = 0;
    for (double v : scores_) sum += v;
    margin = sum / static_cast<double>(scores_.size());
  }
  double coverage = 1;
  if (options_.window_seconds > 0) {
    double r = std::clamp(signals_.span_seconds / options_.window_seconds, 0.0, 1.0);
    coverage = kMinCoverageFactor + (1 - kMinCoverageFactor) * r;
  }
  double quality = quality_ * (fallback_ ? kFallbackQuality : 1.0);
  f.fallback = fallback_;
  f.confidence = std::clamp(std::round(margin * quality * coverage * 100) / 100, 0.0, 1.0);
  f.verdict = from_parent_
                  ? fmt::format("{}: on its parent {}, {}", rule_.headline, signals_.parent, detail)
                  : fmt::format("{}: {}", rule_.headline, detail);
  f.action = std::string(action);
  return f;
}

std::string Pct(double ratio) { return fmt::format("{:.0f}%", ratio * 100); }

std::string Bytes(double bytes) {
  constexpr double kGiB = 1024.0 * 1024 * 1024, kMiB = 1024.0 * 1024;
  if (std::fabs(bytes) >= kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
  return fmt::format("{:.0f} MiB", bytes / kMiB);
}

std::string Rate(double bps) {
  if (bps >= 1e9) return fmt::format("{:.1f} GB/s", bps / 1e9);
  return fmt::format("{:.0f} MB/s", bps / 1e6);
}

std::string Duration(double seconds) {
  long s = std::lround(std::max(0.0, seconds));
  if (s >= 3600) return fmt::format("{}h{:02}m", s / 3600, (s % 3600) / 60);
  if (s >= 60) return fmt::format("{}m{:02}s", s / 60, s % 60);
  return fmt::format("{}s", s);
}

}  // namespace gpuscope::analysis
