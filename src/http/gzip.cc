#include "http/gzip.h"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <limits>

#include "base/text.h"

namespace gpuscope::http {
namespace {

// zlib's reason for a failed call: its message when it set one, else its
// code's name. Z_STREAM_ERROR is a bad argument (the level); anything else
// (no memory) is internal.
Status ZlibError(const char* call, int rc, const z_stream& stream, int level) {
  const std::string message =
      base::Concat({"gzip: ", call, " (level ", std::to_string(level),
                    "): ", stream.msg != nullptr ? stream.msg : zError(rc)});
  return rc == Z_STREAM_ERROR ? Status::InvalidArgument(message) : Status::Internal(message);
}

static_assert(kGzipDefaultLevel == Z_DEFAULT_COMPRESSION);

// One deflate call takes at most a uInt of input and of output (a little
// more than the input).
constexpr std::size_t kGzipMaxBody = std::numeric_limits<uInt>::max() / 2;

}  // namespace

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

Result<std::string> Gzip(std::string_view body, int level) {
  if (body.size() >= kGzipMaxBody) {
    return Status::InvalidArgument(
        base::Concat({"gzip: a body of ", std::to_string(body.size()), " bytes is too large"}));
  }
  z_stream stream{};
  // 15 window bits + 16: a gzip header and trailer instead of zlib's.
  const int init = deflateInit2(&stream, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  if (init != Z_OK) return ZlibError("deflateInit2", init, stream, level);
  std::string out(deflateBound(&stream, static_cast<uLong>(body.size())), '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  stream.avail_in = static_cast<uInt>(body.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&stream, Z_FINISH);
  out.resize(stream.total_out);
  Status failed = rc == Z_STREAM_END ? Status::Ok() : ZlibError("deflate", rc, stream, level);
  deflateEnd(&stream);
  if (!failed.ok()) return failed;
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
