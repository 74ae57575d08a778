// gzip for response bodies (RFC 1952, via zlib), and reading the
// Accept-Encoding header and q values. Thread safety: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace gpuscope::http {

// `body` as a gzip member (zlib's default level: /metrics bodies are
// compressed at most once per sampling cycle, so ratio beats speed).
std::string Gzip(std::string_view body);

// True when an Accept-Encoding header value accepts gzip (RFC 9110 12.5.3):
// "gzip" or "x-gzip" with q > 0, or "*" with q > 0 when gzip is not named.
bool AcceptsGzip(std::string_view accept_encoding);

// The q value in one list element's parameters ("version=1.0.0;q=0.5", RFC
// 9110 12.4.2) of Accept or Accept-Encoding: 1 when absent, 0 when
// unreadable, clamped to [0, 1].
double Quality(std::string_view params);

}  // namespace gpuscope::http
