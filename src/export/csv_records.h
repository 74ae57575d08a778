// The record layer of a counters file, read exactly as dcgm-exporter reads it:
// Go's encoding/csv with Comment = '#' and every other option at its default.
// So, precisely:
//   - records end at LF; CR LF counts as LF, and a CR just before the end of
//     the text is dropped;
//   - an empty line is skipped; a line whose FIRST byte is '#' is a comment
//     (an indented '#' is not: that line is a record);
//   - fields are split on ','; nothing is trimmed here;
//   - a field that starts with '"' is quoted: it ends at a '"' followed by
//     ',' or the end of the record, "" inside it is one '"', and it may span
//     lines; any other '"' after the closing one is an error, as is a quoted
//     field still open at the end of the text;
//   - a '"' inside a field that does not start with one is an error (a space
//     before the quote makes the field unquoted: `a, "b"` is refused).
// (Go's reader also wants every record as long as the first; the counters
// layer wants exactly 3 fields in each, which implies it.)
// Errors name the 1-based line where the offending record starts.
//
// Thread safety: a pure function.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::prom {

struct CsvRecord {
  std::vector<std::string> fields;
  int line = 0;  // 1-based line where the record starts
};

// Splits counters-file text into records; `filename` prefixes error messages.
Result<std::vector<CsvRecord>> ReadCsvRecords(std::string_view text, std::string_view filename);

}  // namespace gpuscope::prom
