#include "http/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "base/text.h"

namespace gpuscope::http {

double Quality(std::string_view params) {
  while (!params.empty()) {
    const std::size_t semi = params.find(';');
    std::string_view param = base::Trim(params.substr(0, semi));
    params = semi == std::string_view::npos ? "" : params.substr(semi + 1);
    if (param.size() > 2 && (param[0] == 'q' || param[0] == 'Q') && param[1] == '=') {
      double q = 0;
      auto [end, ec] = std::from_chars(param.data() + 2, param.data() + param.size(), q);
      return ec == std::errc() ? std::clamp(q, 0.0, 1.0) : 0.0;
    }
  }
  return 1.0;
}

std::string Gzip(std::string_view body) {
  z_stream stream{};
  // 15 window bits + 16: a gzip header and trailer instead of zlib's.
  if (deflateInit2(&stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
      Z_OK) {
    throw std::runtime_error("gzip: deflateInit2 failed");
  }
  std::string out(deflateBound(&stream, static_cast<uLong>(body.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  stream.avail_in = static_cast<uInt>(body.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  deflateEnd(&stream);
  if (rc != Z_STREAM_END) throw std::runtime_error("gzip: deflate did not finish");
  return out;
}

bool AcceptsGzip(std::string_view header) {
  double gzip = -1, any = -1;
  while (!header.empty()) {
    const std::size_t comma = header.find(',');
    std::string_view item = header.substr(0, comma);
    header = comma == std::string_view::npos ? "" : header.substr(comma + 1);
    const std::size_t semi = item.find(';');
    const std::string coding = base::Lower(base::Trim(item.substr(0, semi)));
    const double q = Quality(semi == std::string_view::npos ? "" : item.substr(semi + 1));
    if (coding == "gzip" || coding == "x-gzip") gzip = std::max(gzip, q);
    if (coding == "*") any = std::max(any, q);
  }
  return gzip >= 0 ? gzip > 0 : any > 0;
}

}  // namespace gpuscope::http
