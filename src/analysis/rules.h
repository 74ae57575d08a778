// The diagnosis rules, one function per finding kind, over precomputed
// Signals. Each returns a Finding when its conditions hold. The thresholds
// are named constants in rules_*.cc, each with the reason for its value; the
// FindingBuilder records every value held against its threshold and derives
// the confidence from the margins, the signal quality and the coverage.
//
// Thread safety: pure functions; a FindingBuilder is a local value.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "analysis/diagnosis.h"
#include "analysis/signals.h"

namespace gpuscope::analysis {

// Confidence multiplier for findings that rest on fallbacks instead of GPM.
inline constexpr double kFallbackQuality = 0.7;

class FindingBuilder {
 public:
  FindingBuilder(FindingKind kind, const Signals& signals, const DiagnoseOptions& options);

  // Records value >= threshold (or <=); `full` is the margin past the
  // threshold at which the criterion counts as certain. Returns whether met.
  bool AtLeast(const std::string& signal, double value, double threshold, double full,
               const std::string& unit);
  bool AtMost(const std::string& signal, double value, double threshold, double full,
              const std::string& unit);
  // Records value < threshold (strictly).
  bool Below(const std::string& signal, double value, double threshold, double full,
             const std::string& unit);
  // Records a measured value that informs but does not decide.
  void Note(const std::string& signal, double value, const std::string& unit);
  void Uses(const std::string& catalog_key);
  void Fallback() { fallback_ = true; }
  // Multiplies the confidence (a weaker or indirect signal).
  void Discount(double factor) { quality_ *= factor; }

  Finding Build(std::string verdict, std::string action) const;

 private:
  bool Record(const std::string& signal, double value, const std::string& cmp, double threshold,
              double full, const std::string& unit, bool met, double margin);

  Finding finding_;
  const Signals& signals_;
  const DiagnoseOptions& options_;
  std::vector<double> scores_;
  double quality_ = 1;
  bool fallback_ = false;
};

std::optional<Finding> DetectIdle(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectStarved(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectMemoryBandwidth(const Signals& s, const DiagnoseOptions& o);
// What the window shows when no rule fired (Judgement::activity).
std::string DescribeLoad(const Signals& s, const DiagnoseOptions& o);
// Runs last: only when no other limit was found.
std::optional<Finding> DetectComputeBound(const Signals& s, const DiagnoseOptions& o);

std::optional<Finding> DetectMemoryCapacity(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectThermal(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectPowerCap(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectInterconnect(const Signals& s, const DiagnoseOptions& o);
std::optional<Finding> DetectPcieDegraded(const Signals& s, const DiagnoseOptions& o);

// "85%" / "12.3 GiB" / "4m10s" helpers for verdicts.
std::string Pct(double ratio);
std::string Bytes(double bytes);
std::string Rate(double bytes_per_second);
std::string Duration(double seconds);

}  // namespace gpuscope::analysis
