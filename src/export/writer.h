// Low-level appenders of the Prometheus text format 0.0.4 and OpenMetrics
// 1.0.0: escaping, numbers, HELP/TYPE headers. Everything the exporter writes
// goes through these, so all families format alike. Appending to a reserved
// std::string, no iostreams, no allocation beyond the string's growth.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "export/family.h"

namespace gpuscope::prom {

enum class Format : uint8_t {
  kText,         // text/plain; version=0.0.4
  kOpenMetrics,  // application/openmetrics-text; version=1.0.0 (ends with "# EOF")
};

// Label values come from outside (job ids, pod and workload names, OTLP
// attributes): one longer than this many bytes is cut to fit, on a UTF-8
// boundary, and ends with `kLabelValueMarker` and 16 hex digits of a 64-bit
// FNV-1a hash of the whole value, so that values that differ only past the
// cut still make distinct series (docs/metrics.md, "Label values").
inline constexpr std::size_t kMaxLabelValueBytes = 256;
inline constexpr std::string_view kLabelValueMarker = "...#";

// `value` within kMaxLabelValueBytes: itself when it fits, else cut and marked.
std::string CappedLabelValue(std::string_view value);

// Appends a label value, capped (CappedLabelValue), with `\`, `"` and
// newline escaped.
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
