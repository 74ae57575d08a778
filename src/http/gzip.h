// gzip for response bodies (RFC 1952, via libdeflate, linked statically: a
// whole-buffer compressor, which is what a rendered body is), and reading the
// Accept-Encoding header and q values. Errors are values: a body that cannot
// be compressed is a failed Result, and the caller sends it plain.
// Thread safety: any thread; each keeps its own compressor (about 650 KiB).
#pragma once

#include <string>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope::http {

// libdeflate's default level (6).
inline constexpr int kGzipDefaultLevel = -1;

// `body` as a gzip member at compression `level` (0 stores, 1-12 from fastest
// to smallest, or -1 for the default: /metrics bodies are compressed at most
// once per sampling cycle, but on the scrape's thread, so the default weighs
// time against bytes). Fails on a level outside those or out of memory.
Result<std::string> Gzip(std::string_view body, int level = kGzipDefaultLevel);

// True when an Accept-Encoding header value accepts gzip (RFC 9110 12.5.3):
// "gzip" or "x-gzip" with q > 0, or "*" with q > 0 when gzip is not named.
bool AcceptsGzip(std::string_view accept_encoding);

// The q value in one list element's parameters ("version=1.0.0;q=0.5", RFC
// 9110 12.4.2) of Accept or Accept-Encoding: 1 when absent, 0 when
// unreadable, clamped to [0, 1].
double Quality(std::string_view params);

}  // namespace gpuscope::http
