// libFuzzer target: the exposition escaper (export/writer.h). Whatever text
// reaches a label value or a HELP line, the output is valid UTF-8 without raw
// control characters (the header's line ends aside), and unescaping it gives
// back the input (cut to the label-value cap) wherever the input was valid.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "base/text.h"
#include "export/writer.h"

namespace {

void CheckClean(std::string_view out) {
  if (gpuscope::base::FindInvalidUtf8(out)) std::abort();
  if (gpuscope::base::FindControlChar(out)) std::abort();
}

// Undoes AppendLabelValue's escapes; only for inputs with nothing replaced.
std::string Unescape(std::string_view escaped) {
  std::string out;
  for (std::size_t i = 0; i < escaped.size(); ++i) {
    if (escaped[i] != '\\') {
      out += escaped[i];
      continue;
    }
    if (++i >= escaped.size()) std::abort();  // a dangling backslash
    out += escaped[i] == 'n' ? '\n' : escaped[i];
  }
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace gpuscope::prom;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string value;
  AppendLabelValue(text, &value);
  CheckClean(value);
  const bool clean = !gpuscope::base::FindInvalidUtf8(text) &&
                     text.find_first_of(std::string_view("\0\r\x7f", 3)) == std::string_view::npos;
  bool controls = false;
  for (char c : text) controls |= static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t';
  // A long value is cut to kMaxLabelValueBytes first (CappedLabelValue): what
  // unescapes back is the capped value, never longer than the cap.
  const std::string capped = CappedLabelValue(text);
  if (capped.size() > kMaxLabelValueBytes ||
      (text.size() <= kMaxLabelValueBytes && capped != text)) {
    std::abort();
  }
  if (clean && !controls && Unescape(value) != capped) std::abort();
  for (Format format : {Format::kText, Format::kOpenMetrics}) {
    std::string header;
    AppendHeader("gpuscope_fuzz", text, FamilyType::kGauge, format, &header);
    if (header.empty() || header.back() != '\n') std::abort();
    // Exactly two lines: # HELP and # TYPE; no raw newline from the input.
    std::size_t first = header.find('\n');
    if (header.find('\n', first + 1) != header.size() - 1) std::abort();
    CheckClean(std::string_view(header).substr(0, first));
  }
  return 0;
}
