// What the diagnosis rules share: one detector per finding kind (declared
// with its row in rules_table.h) over precomputed Signals returns a Finding
// when its conditions hold. Thresholds are named in rules_thresholds.h. The
// FindingBuilder records every value held against its threshold and derives
// the confidence from the margins, the signal quality and the coverage; the
// verdict's headline and the action come from the kind's row.
//
// Thread safety: pure functions; a FindingBuilder is a local value.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/diagnosis.h"
#include "analysis/rules_table.h"
#include "analysis/signals.h"
#include "gpuscope/catalog.h"

namespace gpuscope::analysis {

// Confidence multiplier for findings that rest on fallbacks instead of GPM.
inline constexpr double kFallbackQuality = 0.7;

// On a MIG instance, a rule it inherits from its parent GPU (thermal, power:
// analysis/mig.h) names its evidence "parent_<signal>" and its verdict says
// "on its parent GPU 0".
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
  // A catalog metric the finding rests on (Finding::signals: its key); one
  // of the row's inputs.
  void Uses(Metric metric);
  void Fallback() { fallback_ = true; }
  // Multiplies the confidence (a weaker or indirect signal).
  void Discount(double factor) { quality_ *= factor; }

  // The finding, its verdict "<row headline>: <detail>", its action the row's.
  Finding Build(const std::string& detail) const;
  // ...with a variant of the action the rule picked by what it found.
  Finding Build(const std::string& detail, std::string_view action) const;

 private:
  bool Record(const std::string& signal, double value, const std::string& cmp, double threshold,
              double full, const std::string& unit, bool met, double margin);

  // Evidence name: "parent_" + signal where the finding is the parent's.
  std::string Named(const std::string& signal) const;

  const Rule& rule_;
  // A MIG instance's finding of a rule it inherits from its parent GPU
  // (analysis/mig.h): every value recorded is the parent's.
  bool from_parent_ = false;
  Finding finding_;
  const Signals& signals_;
  const DiagnoseOptions& options_;
  std::vector<double> scores_;
  double quality_ = 1;
  bool fallback_ = false;
};

// What the window shows when no rule fired (Judgement::activity).
std::string DescribeLoad(const Signals& s, const DiagnoseOptions& o);

// "85%" / "12.3 GiB" / "4m10s" helpers for verdicts.
std::string Pct(double ratio);
std::string Bytes(double bytes);
std::string Rate(double bytes_per_second);
std::string Duration(double seconds);

}  // namespace gpuscope::analysis
