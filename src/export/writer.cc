#include "export/writer.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "base/text.h"

namespace gpuscope::prom {
namespace {

// Integers up to 2^53 are exact in a double; beyond, the double form is exact.
constexpr double kExactIntegerLimit = 9007199254740992.0;

bool AppendNonFinite(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
    return true;
  }
  if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
    return true;
  }
  return false;
}

void AppendInt64(int64_t value, std::string* out) {
  char buffer[24];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, end);
}

// A value with at most 4 decimals and 1e-3 <= |v| < 4.5e11, written from an
// integer: several times faster than to_chars, and the same characters. In
// that range one k-decimal candidate at most round-trips (k <= 4 and
// |v| * 10^k < 2^52), so the smallest such k gives to_chars' shortest digits,
// and the fixed form is never longer than the exponent form.
bool AppendShortDecimal(double value, std::string* out) {
  double magnitude = std::fabs(value);
  if (!(magnitude >= 1e-3 && magnitude < 4.5e11)) return false;
  constexpr double kPow10[] = {1, 10, 100, 1000, 10000};
  for (int k = 1; k <= 4; ++k) {
    double scaled = std::nearbyint(magnitude * kPow10[k]);
    if (scaled / kPow10[k] != magnitude) continue;
    char digits[24];
    char* end = std::to_chars(digits, digits + sizeof(digits), static_cast<uint64_t>(scaled)).ptr;
    std::size_t length = static_cast<std::size_t>(end - digits);
    std::size_t decimals = static_cast<std::size_t>(k);
    if (value < 0) out->push_back('-');
    if (length <= decimals) {
      out->append("0.");
      out->append(decimals - length, '0');
      out->append(digits, length);
    } else {
      out->append(digits, length - decimals);
      out->push_back('.');
      out->append(end - decimals, decimals);
    }
    return true;
  }
  return false;
}

// Escapes `\`, newline and, when `quotes`, `"`. Bytes that are not UTF-8 and
// control characters other than tab become U+FFFD: whatever reaches here, the
// exposition stays parseable (inputs are validated before; this is the last
// line of defence).
void AppendEscaped(std::string_view text, bool quotes, std::string* out) {
  static constexpr std::string_view kReplacement = "\xef\xbf\xbd";
  std::size_t start = 0;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t length = 1;
    std::string_view replacement;
    if (c == '\\') {
      replacement = "\\\\";
    } else if (c == '\n') {
      replacement = "\\n";
    } else if (c == '"' && quotes) {
      replacement = "\\\"";
    } else if ((c < 0x20 && c != '\t') || c == 0x7f) {
      replacement = kReplacement;
    } else if (c >= 0x80) {
      length = base::Utf8SequenceLength(text, i);
      if (length == 0) {
        replacement = kReplacement;
        length = 1;
      }
    }
    if (replacement.empty()) {
      i += length;
      continue;
    }
    out->append(text.data() + start, i - start);
    out->append(replacement);
    i += length;
    start = i;
  }
  out->append(text.data() + start, text.size() - start);
}

void AppendHelpText(std::string_view help, Format format, std::string* out) {
  // OpenMetrics escapes quotes in HELP; 0.0.4 must not.
  AppendEscaped(help, format == Format::kOpenMetrics, out);
}

std::string_view TypeWord(std::string_view name, FamilyType type, Format format) {
  switch (type) {
    case FamilyType::kGauge:
      return "gauge";
    case FamilyType::kCounter:
      if (format == Format::kText) return "counter";
      return name.ends_with("_total") ? "counter" : "unknown";
    case FamilyType::kUnknown:
      return format == Format::kText ? "untyped" : "unknown";
    case FamilyType::kInfo:
      if (format == Format::kText) return "gauge";
      return name.ends_with("_info") ? "info" : "gauge";
    case FamilyType::kHistogram:
      return "histogram";
  }
  return "unknown";
}

}  // namespace

std::string CappedLabelValue(std::string_view value) {
  if (value.size() <= kMaxLabelValueBytes) return std::string(value);
  uint64_t hash = 14695981039346656037ull;  // FNV-1a, 64 bits
  for (char c : value) hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  char digits[17];
  std::snprintf(digits, sizeof(digits), "%016llx", static_cast<unsigned long long>(hash));
  std::size_t cut = kMaxLabelValueBytes - kLabelValueMarker.size() - 16;
  // Back to the start of the character the cut falls in (never into a UTF-8 sequence).
  for (std::size_t back = 0; back < 3 && cut > 0 && (value[cut] & 0xc0) == 0x80; ++back) --cut;
  std::string out(value.substr(0, cut));
  out.append(kLabelValueMarker);
  out.append(digits, 16);
  return out;
}

void AppendLabelValue(std::string_view value, std::string* out) {
  if (value.size() <= kMaxLabelValueBytes) return AppendEscaped(value, true, out);
  AppendEscaped(CappedLabelValue(value), true, out);
}

void AppendLabel(std::string_view name, std::string_view value, bool first, std::string* out) {
  if (!first) out->push_back(',');
  out->append(name);
  out->append("=\"");
  AppendLabelValue(value, out);
  out->push_back('"');
}

void AppendValue(double value, std::string* out) {
  if (AppendNonFinite(value, out)) return;
  if (std::fabs(value) <= kExactIntegerLimit && value == std::trunc(value)) {
    AppendInt64(static_cast<int64_t>(value), out);
    return;
  }
  if (AppendShortDecimal(value, out)) return;
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out->append(buffer, end);
}

void AppendInteger(double value, std::string* out) {
  if (AppendNonFinite(value, out)) return;
  double whole = std::trunc(value);
  if (std::fabs(whole) < 9.2e18) {
    AppendInt64(static_cast<int64_t>(whole), out);
  } else {
    AppendValue(whole, out);
  }
}

std::string_view HeaderName(std::string_view name, FamilyType type, Format format) {
  if (format != Format::kOpenMetrics) return name;
  if (type == FamilyType::kCounter && name.ends_with("_total")) name.remove_suffix(6);
  if (type == FamilyType::kInfo && name.ends_with("_info")) name.remove_suffix(5);
  return name;
}

void AppendHeader(std::string_view name, std::string_view help, FamilyType type, Format format,
                  std::string* out) {
  std::string_view declared = HeaderName(name, type, format);
  out->append("# HELP ");
  out->append(declared);
  out->push_back(' ');
  AppendHelpText(help, format, out);
  out->append("\n# TYPE ");
  out->append(declared);
  out->push_back(' ');
  out->append(TypeWord(name, type, format));
  out->push_back('\n');
}

}  // namespace gpuscope::prom
