#include "otlp/decode.h"

#include <zlib.h>

#include <algorithm>

#include "base/text.h"

namespace gpuscope::otlp {
namespace {

// Another gzip member may follow one that ended (RFC 1952 2.2); anything else after the end is
// refused rather than silently dropped.
bool AnotherMember(const z_stream& z) {
  return z.avail_in >= 2 && z.next_in[0] == 0x1f && z.next_in[1] == 0x8b;
}

std::optional<Failure> Inflate(std::string_view body, std::size_t limit, std::string* out) {
  z_stream z{};
  if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) return Failure{500, "cannot start gzip decoding"};
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  z.avail_in = static_cast<uInt>(body.size());
  out->clear();
  char buffer[64 * 1024];
  int rc = Z_OK;
  while (rc == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(buffer);
    z.avail_out = sizeof buffer;
    rc = inflate(&z, Z_NO_FLUSH);
    const std::size_t produced = sizeof buffer - z.avail_out;
    if (out->size() + produced > limit) {
      inflateEnd(&z);
      return Failure{413, "the gzip body inflates to more than the receiver's limit of " +
                              std::to_string(limit) + " bytes (otlp-max-request-bytes)"};
    }
    out->append(buffer, produced);
    if (rc == Z_STREAM_END && AnotherMember(z) && inflateReset(&z) == Z_OK) rc = Z_OK;
    if (rc == Z_BUF_ERROR && z.avail_in == 0) break;  // input ended before the stream did
  }
  const uInt trailing = z.avail_in;
  inflateEnd(&z);
  if (rc != Z_STREAM_END) {
    return Failure{400, "the gzip body is corrupt or truncated (" +
                            std::string(z.msg != nullptr ? z.msg : "unexpected end") + ")"};
  }
  if (trailing > 0) {
    return Failure{400, "the gzip body has " + std::to_string(trailing) +
                            " bytes of garbage after the end of its gzip stream"};
  }
  return std::nullopt;
}

}  // namespace

std::optional<Encoding> EncodingOf(std::string_view content_type) {
  const std::string type = base::Lower(base::Trim(content_type.substr(0, content_type.find(';'))));
  if (type == "application/x-protobuf" || type == "application/protobuf") {
    return Encoding::kProtobuf;
  }
  if (type == "application/json") return Encoding::kJson;
  return std::nullopt;
}

std::optional<Failure> DecodeContent(std::string_view body, std::string_view encoding,
                                     std::size_t limit, std::string* out) {
  const std::string e = base::Lower(base::Trim(encoding));
  if (e.empty() || e == "identity") {
    out->assign(body);
    return std::nullopt;
  }
  if (e == "gzip" || e == "x-gzip") return Inflate(body, limit, out);
  return Failure{415,
                 "unsupported Content-Encoding '" + std::string(encoding) + "' (gzip or none)"};
}

}  // namespace gpuscope::otlp
