#include "http/gzip.h"

#include <libdeflate.h>

#include <algorithm>
#include <charconv>
#include <memory>

#include "base/text.h"

namespace gpuscope::http {
namespace {

// libdeflate's own default, and a ratio a little better than zlib's level 6
// at under two thirds of the time (bench/performance-notes.md).
constexpr int kLibdeflateDefaultLevel = 6;
constexpr int kMaxLevel = 12;

using Compressor = std::unique_ptr<libdeflate_compressor, decltype(&libdeflate_free_compressor)>;

// One compressor per thread, kept for its level: allocating and faulting in its 650 KiB of tables
// for every body took as long as compressing a 64-GPU body. Null when out of memory.
libdeflate_compressor* CompressorFor(int level) {
  thread_local int cached_level = -1;
  thread_local Compressor cached(nullptr, &libdeflate_free_compressor);
  if (cached == nullptr || cached_level != level) {
    cached.reset(libdeflate_alloc_compressor(level));
    cached_level = level;
  }
  return cached.get();
}

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
  if (level == kGzipDefaultLevel) level = kLibdeflateDefaultLevel;
  if (level < 0 || level > kMaxLevel) {
    return Status::InvalidArgument(
        base::Concat({"gzip: level ", std::to_string(level), " is outside 0-12"}));
  }
  libdeflate_compressor* compressor = CompressorFor(level);
  if (compressor == nullptr) return Status::Internal("gzip: out of memory");
  // Exposition text shrinks about tenfold, so a quarter of the body is room enough and far less
  // to allocate than the worst-case bound, which a body that does not shrink gets on a second try.
  std::string out(body.size() / 4 + 64, '\0');
  std::size_t size =
      libdeflate_gzip_compress(compressor, body.data(), body.size(), out.data(), out.size());
  if (size == 0) {
    out.assign(libdeflate_gzip_compress_bound(compressor, body.size()), '\0');
    size = libdeflate_gzip_compress(compressor, body.data(), body.size(), out.data(), out.size());
  }
  // The bound always suffices; 0 would mean it did not.
  if (size == 0) return Status::Internal("gzip: the compressed body overflowed its bound");
  out.resize(size);
  out.shrink_to_fit();  // the body is kept for the cycle
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
