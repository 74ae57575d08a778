// gzip bodies and Accept-Encoding negotiation (http/gzip.h).
#include <gtest/gtest.h>
#include <zlib.h>

#include <string>

#include "http/gzip.h"

namespace gpuscope::http {
namespace {

// Inflates a gzip member with zlib (the way a client reads the body).
std::string Gunzip(const std::string& data) {
  z_stream stream{};
  EXPECT_EQ(inflateInit2(&stream, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&stream, Z_FINISH), Z_STREAM_END);
  out.resize(stream.total_out);
  inflateEnd(&stream);
  return out;
}

TEST(Gzip, RoundTripsAndCompresses) {
  std::string body;
  for (int i = 0; i < 2000; ++i) {
    body += "gpuscope_power_usage_watts{gpu=\"" + std::to_string(i % 8) + "\"} " +
            std::to_string(i * 7) + "\n";
  }
  Result<std::string> zipped = Gzip(body);
  ASSERT_TRUE(zipped.ok()) << zipped.status().message();
  const std::string& gz = *zipped;
  ASSERT_GE(gz.size(), 18u);
  EXPECT_EQ(static_cast<unsigned char>(gz[0]), 0x1f);  // gzip magic
  EXPECT_EQ(static_cast<unsigned char>(gz[1]), 0x8b);
  EXPECT_LT(gz.size() * 5, body.size());
  EXPECT_EQ(Gunzip(gz), body);
  EXPECT_EQ(Gunzip(Gzip("").value()), "");
}

TEST(Gzip, EveryLevelRoundTrips) {
  const std::string body(5000, 'x');
  for (int level = -1; level <= 12; ++level) {
    Result<std::string> gz = Gzip(body, level);
    ASSERT_TRUE(gz.ok()) << level << ": " << gz.status().message();
    EXPECT_EQ(Gunzip(*gz), body) << level;
  }
  // Level 0 stores the body; 9 compresses it.
  EXPECT_GT(Gzip(body, 0)->size(), body.size());
  EXPECT_LT(Gzip(body, 9)->size() * 50, body.size());
}

// A body that does not shrink (random bytes) still fits: the first buffer is a quarter of the
// body, the second try the worst-case bound.
TEST(Gzip, ABodyThatDoesNotShrinkRoundTrips) {
  std::string body(100000, '\0');
  unsigned state = 12345;
  for (char& c : body) c = static_cast<char>((state = state * 1103515245u + 12345u) >> 24);
  Result<std::string> gz = Gzip(body);
  ASSERT_TRUE(gz.ok()) << gz.status().message();
  EXPECT_GT(gz->size(), body.size() / 4);
  EXPECT_EQ(Gunzip(*gz), body);
}

// A failure is a value naming the problem, never an exception or a body.
TEST(Gzip, ALevelOutOfRangeIsAnError) {
  for (int level : {-2, 13, 1000}) {
    Result<std::string> gz = Gzip("a body", level);
    ASSERT_FALSE(gz.ok()) << level;
    EXPECT_EQ(gz.status().code(), Status::Code::kInvalidArgument);
    EXPECT_EQ(gz.status().message(), "gzip: level " + std::to_string(level) + " is outside 0-12");
  }
}

TEST(Gzip, AcceptEncoding) {
  EXPECT_TRUE(AcceptsGzip("gzip"));
  EXPECT_TRUE(AcceptsGzip("GZip"));
  EXPECT_TRUE(AcceptsGzip("deflate, gzip;q=0.5"));
  EXPECT_TRUE(AcceptsGzip("x-gzip"));
  EXPECT_TRUE(AcceptsGzip("*"));
  EXPECT_TRUE(AcceptsGzip(" br ; q=1 , gzip "));
  EXPECT_FALSE(AcceptsGzip(""));
  EXPECT_FALSE(AcceptsGzip("identity"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzip;q=0, *"));  // named with q=0 beats the wildcard
  EXPECT_FALSE(AcceptsGzip("*;q=0"));
  EXPECT_FALSE(AcceptsGzip("gzipped"));
}

}  // namespace
}  // namespace gpuscope::http
