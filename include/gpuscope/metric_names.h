// The name lint shared by the metric catalog and the family registry
// (export/builtin_families.h): Prometheus name syntax, and for native names a
// gpuscope_ prefix, `_total` exactly on counters, and a base unit (or a
// dimensionless word) as the last part of the name. Evaluated at compile
// time by static_asserts. Thread safety: constexpr functions.
#pragma once

#include <cstddef>
#include <string_view>

namespace gpuscope::metric_names {

constexpr bool IsNameChar(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
         (!first && c >= '0' && c <= '9');
}

// [a-zA-Z_:][a-zA-Z0-9_:]*
constexpr bool Valid(std::string_view name) {
  if (name.empty()) return false;
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (!IsNameChar(name[i], i == 0)) return false;
  }
  return true;
}

constexpr bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Base units, then dimensionless words for states, flags and identities.
inline constexpr std::string_view kSuffixes[] = {
    "_ratio",   "_bytes",     "_watts",      "_joules",     "_hertz",
    "_celsius", "_seconds",   "_total",      "_generation", "_generation_max",
    "_width",   "_width_max", "_state",      "_pending",    "_failure",
    "_enabled", "_action",    "_info",       "_up",         "_stale",
    "_lost",    "_active",    "_confidence", "_health",     "_bottleneck"};

constexpr bool ValidNative(std::string_view name, bool counter) {
  if (!Valid(name) || name.substr(0, 9) != "gpuscope_") return false;
  if (counter != EndsWith(name, "_total")) return false;
  for (std::string_view suffix : kSuffixes) {
    if (EndsWith(name, suffix)) return true;
  }
  return false;
}

}  // namespace gpuscope::metric_names
