// gzip for response bodies (RFC 1952, via zlib), and reading the
// Accept-Encoding header and q values. Errors are values: a body zlib cannot
// compress is a failed Result, and the caller sends it plain.
// Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::http {

// zlib's default compression level (Z_DEFAULT_COMPRESSION, 6 today).
inline constexpr int kGzipDefaultLevel = -1;

// `body` as a gzip member at zlib compression `level` (0-9, or -1 for zlib's
// default: /metrics bodies are compressed at most once per sampling cycle, so
// ratio beats speed). Fails, with zlib's reason, when zlib refuses the level
// or runs out of memory, and for a body of 2 GiB or more (one zlib call).
Result<std::string> Gzip(std::string_view body, int level = kGzipDefaultLevel);

// True when an Accept-Encoding header value accepts gzip (RFC 9110 12.5.3):
// "gzip" or "x-gzip" with q > 0, or "*" with q > 0 when gzip is not named.
bool AcceptsGzip(std::string_view accept_encoding);

// The q value in one list element's parameters ("version=1.0.0;q=0.5", RFC
// 9110 12.4.2) of Accept or Accept-Encoding: 1 when absent, 0 when
// unreadable, clamped to [0, 1].
double Quality(std::string_view params);

}  // namespace gpuscope::http
