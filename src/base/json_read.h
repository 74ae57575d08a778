// Reading JSON that came from the network (an agent's health report, a job's
// usage) into plain values, by explicit type checks: never nlohmann's
// conversions, which throw on a wrong type or cast a number out of range.
// Each Read is true when `j` holds a value of `out`'s type (which then goes
// into it), false otherwise. Every text is printed on a terminal later, so a
// string's control characters (escape sequences, a newline faking a line)
// become U+FFFD here (base::TerminalText).
//
// Thread safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/text.h"

namespace gpuscope::base::json_read {

using nlohmann::json;

inline bool Read(const json& j, std::string& out) {
  if (!j.is_string()) return false;
  out = TerminalText(j.get_ref<const std::string&>());
  return true;
}
inline bool Read(const json& j, bool& out) {
  if (!j.is_boolean()) return false;
  out = j.get<bool>();
  return true;
}
inline bool Read(const json& j, double& out) {
  if (!j.is_number()) return false;
  out = j.get<double>();
  return std::isfinite(out);  // 1e999 parses as infinity: no reading
}
inline bool Read(const json& j, unsigned& out) {
  if (!j.is_number_unsigned() || j.get<std::uint64_t>() > std::numeric_limits<unsigned>::max()) {
    return false;
  }
  out = static_cast<unsigned>(j.get<std::uint64_t>());
  return true;
}
inline bool Read(const json& j, std::uint64_t& out) {
  if (!j.is_number_unsigned()) return false;
  out = j.get<std::uint64_t>();
  return true;
}
// An array of values of one type.
template <typename T>
bool Read(const json& j, std::vector<T>& out) {
  if (!j.is_array()) return false;
  for (const json& item : j) {
    if (!Read(item, out.emplace_back())) return false;
  }
  return true;
}
// An object of values of one type, by key.
template <typename T>
bool Read(const json& j, std::map<std::string, T>& out) {
  if (!j.is_object()) return false;
  for (const auto& [key, value] : j.items()) {
    if (!Read(value, out[key])) return false;
  }
  return true;
}

}  // namespace gpuscope::base::json_read
