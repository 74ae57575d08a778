// What the report fuzz targets assert of every text they print.
#pragma once

#include <cstddef>
#include <string>

namespace gpuscope::fuzz {

// Whether `text` holds a byte that could drive a terminal (C0 but newline,
// DEL, or C1 written as UTF-8).
inline bool HasTerminalControl(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if ((c < 0x20 && c != '\n') || c == 0x7f) return true;
    if (c == 0xc2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) < 0xa0) {
      return true;
    }
  }
  return false;
}

}  // namespace gpuscope::fuzz
