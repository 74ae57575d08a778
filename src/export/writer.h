// Low-level appenders of the Prometheus text format 0.0.4 and OpenMetrics
// 1.0.0: escaping, numbers, HELP/TYPE headers. Everything the exporter writes
// goes through these, so all families format alike. Appending to a reserved
// std::string, no iostreams, no allocation beyond the string's growth.
//
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "export/family.h"

namespace gpuscope::prom {

enum class Format : uint8_t {
  kText,         // text/plain; version=0.0.4
  kOpenMetrics,  // application/openmetrics-text; version=1.0.0 (ends with "# EOF")
};

// Appends a label value with `\`, `"` and newline escaped.
void AppendLabelValue(std::string_view value, std::string* out);

// Appends `,name="value"` (no comma when `first`).
void AppendLabel(std::string_view name, std::string_view value, bool first, std::string* out);

// Appends a sample value in its shortest exact form: integers without ".0"
// (when exactly representable), otherwise std::to_chars' shortest round-trip
// form (0.1, 1e-05, 69.85); NaN, +Inf, -Inf.
void AppendValue(double value, std::string* out);

// Appends a value as an integer, truncated toward zero (dcgm-exporter's
// integer fields); NaN and infinities as in AppendValue.
void AppendInteger(double value, std::string* out);

// The family name a header declares: in OpenMetrics counters drop `_total`
// and info families `_info`.
std::string_view HeaderName(std::string_view name, FamilyType type, Format format);

// Appends `# HELP` and `# TYPE` lines. In OpenMetrics a counter named
// `*_total` is declared under its name without the suffix, and a counter with
// another name is declared `unknown` (its samples keep their name).
void AppendHeader(std::string_view name, std::string_view help, FamilyType type, Format format,
                  std::string* out);

}  // namespace gpuscope::prom
