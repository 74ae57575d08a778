// Compile-time proof that the rule table (rules_table.h) and FindingKind
// agree, and the docs tables generated from it.
#include "analysis/rules_table.h"

#include <fmt/format.h>

#include "analysis/rules.h"

namespace gpuscope::analysis {
namespace {

constexpr std::size_t kCount = kFindingKindCount;

// Every FindingKind, by name. -Wswitch (an error under GPUSCOPE_WERROR) names
// an enumerator added to FindingKind and missing here; KindsAreExactlyTheRows
// then requires the kinds listed to be exactly 0 .. kFindingKindCount - 1.
constexpr bool KindListed(FindingKind kind) {
  switch (kind) {
    case FindingKind::kComputeBound:
    case FindingKind::kMemoryCapacity:
    case FindingKind::kMemoryBandwidth:
    case FindingKind::kThermalThrottle:
    case FindingKind::kPowerCap:
    case FindingKind::kInterconnect:
    case FindingKind::kPcieDegraded:
    case FindingKind::kStarved:
    case FindingKind::kIdleHeld:
    case FindingKind::kIdle:
    case FindingKind::kVgpuContention:
      return true;
  }
  return false;
}

constexpr bool KindsAreExactlyTheRows() {
  for (unsigned v = 0; v <= 0xff; ++v) {
    if (KindListed(static_cast<FindingKind>(v)) != (v < kCount)) return false;
  }
  return true;
}

constexpr bool RowsInEnumOrder() {
  for (std::size_t i = 0; i < kCount; ++i) {
    if (static_cast<std::size_t>(kRules[i].kind) != i || kAllFindingKinds[i] != kRules[i].kind) {
      return false;
    }
  }
  return true;
}

// Metric label values: [a-z_]+, not starting with '_'.
constexpr bool SnakeCase(std::string_view s) {
  if (s.empty() || s.front() == '_') return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  }
  return true;
}

constexpr bool NamesUnique() {
  for (std::size_t i = 0; i < kCount; ++i) {
    if (!SnakeCase(kRules[i].name) || kRules[i].headline.empty()) return false;
    for (std::size_t j = i + 1; j < kCount; ++j) {
      if (kRules[i].name == kRules[j].name || kRules[i].headline == kRules[j].headline) {
        return false;
      }
    }
  }
  return true;
}

// `order` is a permutation of 0 .. count - 1 and the stages follow it.
constexpr bool OrderFollowsStages() {
  for (std::size_t i = 0; i < kCount; ++i) {
    if (kRules[i].order >= kCount) return false;
    for (std::size_t j = 0; j < kCount; ++j) {
      if (i == j) continue;
      if (kRules[i].order == kRules[j].order) return false;
      if (kRules[i].order < kRules[j].order && kRules[i].stage > kRules[j].stage) return false;
    }
  }
  return true;
}

// Only limit rules are judged on an idle GPU or rule out the healthy verdict
// (an idle or healthy one cannot rule it out); limit and healthy rules may be
// judged over the recent span (an idle rule reads its trailing idle run).
constexpr bool FlagsFitStages() {
  for (const Rule& r : kRules) {
    if (r.stage != Stage::kLimit && (r.limits || r.when_idle)) return false;
    if (r.stage == Stage::kIdle && r.recent) return false;
  }
  return true;
}

// Thresholds compare by name and value, not address: the addresses of two
// constexpr objects do not compare as a constant expression under ASan.
constexpr bool Same(const Threshold* a, const Threshold* b) {
  return a->name == b->name && a->value == b->value && a->unit == b->unit && a->why == b->why;
}
constexpr bool Same(Metric a, Metric b) { return a == b; }

template <typename T>
constexpr bool Distinct(std::span<const T> items) {
  for (std::size_t i = 0; i < items.size(); ++i) {
    for (std::size_t j = i + 1; j < items.size(); ++j) {
      if (Same(items[i], items[j])) return false;
    }
  }
  return !items.empty();
}

constexpr bool KnownUnit(std::string_view u) {
  return u == "ratio" || u == "points" || u == "s" || u == "bytes" || u == "count" || u == "C";
}

// Each row has what the docs and the evaluation need; every threshold has a
// name, a unit and a reason, and one name is one threshold across the rules.
// (The detector is checked by a unit test: comparing a function's address
// with null is not a constant expression in the sanitizer builds either.)
constexpr bool RowsComplete() {
  for (const Rule& r : kRules) {
    if (r.action.empty() || r.when.empty() || r.remedy.empty()) return false;
    if (!Distinct(r.inputs) || !Distinct(r.thresholds)) return false;
    for (const Threshold* t : r.thresholds) {
      if (!SnakeCase(t->name) || !KnownUnit(t->unit) || t->why.empty()) return false;
      for (const Rule& other : kRules) {
        for (const Threshold* u : other.thresholds) {
          if (u->name == t->name && !Same(u, t)) return false;
        }
      }
    }
  }
  return true;
}

static_assert(KindsAreExactlyTheRows(), "FindingKind must be 0 .. kFindingKindCount - 1");
static_assert(RowsInEnumOrder(), "kRules and kAllFindingKinds: one row per kind, in enum order");
static_assert(NamesUnique(), "rule names: unique snake_case; headlines: unique, not empty");
static_assert(OrderFollowsStages(), "Rule::order: a permutation that runs stage by stage");
static_assert(FlagsFitStages(),
              "limits and when_idle belong to limit rules, recent to limit and healthy ones");
static_assert(RowsComplete(), "every rule: texts, distinct inputs and thresholds");

std::string ThresholdValue(const Threshold& t) {
  if (t.unit == "ratio") return fmt::format("{:g}%", t.value * 100);
  if (t.unit == "points") return fmt::format("{:g} points", t.value * 100);
  if (t.unit == "s") return Duration(t.value);
  if (t.unit == "bytes") return Bytes(t.value);
  if (t.unit == "C") return fmt::format("{:g} C", t.value);
  return fmt::format("{:g}", t.value);
}

}  // namespace

std::string RulesDocTable() {
  std::string out = "| kind | when | action |\n|---|---|---|\n";
  for (const Rule& r : kRules) out += fmt::format("| `{}` | {} | {} |\n", r.name, r.when, r.remedy);
  return out;
}

std::string ThresholdsDocTable() {
  std::string out = "| kind | threshold | value | why |\n|---|---|---|---|\n";
  for (const Rule& r : kRules) {
    for (const Threshold* t : r.thresholds) {
      out +=
          fmt::format("| `{}` | `{}` | {} | {} |\n", r.name, t->name, ThresholdValue(*t), t->why);
    }
  }
  return out;
}

}  // namespace gpuscope::analysis
