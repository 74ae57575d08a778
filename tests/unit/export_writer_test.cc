#include <gtest/gtest.h>

#include <charconv>
#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "export/writer.h"

namespace gpuscope::prom {
namespace {

std::string Value(double v) {
  std::string out;
  AppendValue(v, &out);
  return out;
}

std::string Integer(double v) {
  std::string out;
  AppendInteger(v, &out);
  return out;
}

TEST(Writer, ShortestExactDoubles) {
  EXPECT_EQ(Value(0.1), "0.1");
  EXPECT_EQ(Value(1e-05), "1e-05");
  EXPECT_EQ(Value(123456789), "123456789");
  EXPECT_EQ(Value(69.85), "69.85");
  EXPECT_EQ(Value(0), "0");
  EXPECT_EQ(Value(-0.0), "0");
  EXPECT_EQ(Value(-3), "-3");
  EXPECT_EQ(Value(1700000000.25), "1700000000.25");
  EXPECT_EQ(Value(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(Value(1e20), "1e+20");
  EXPECT_EQ(Value(0.45), "0.45");
  EXPECT_EQ(Value(-0.0005), "-5e-04");
  EXPECT_EQ(Value(0.001), "0.001");
  EXPECT_EQ(Value(0.0015), "0.0015");
  EXPECT_EQ(Value(123456.789), "123456.789");
  EXPECT_EQ(Value(-42.5), "-42.5");
  EXPECT_EQ(Value(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(Value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(Value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(Value(-std::numeric_limits<double>::infinity()), "-Inf");
}

// Non-integers are written exactly as std::to_chars' shortest form.
TEST(Writer, NonIntegersMatchToChars) {
  std::mt19937_64 random(42);
  std::uniform_int_distribution<int64_t> mantissa(-2000000000000000, 2000000000000000);
  std::uniform_int_distribution<int> decimals(1, 9);
  std::uniform_real_distribution<double> any(-1e6, 1e6);
  const double kPow10[] = {1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9};
  for (int i = 0; i < 200000; ++i) {
    double v = i % 3 == 0
                   ? any(random)
                   : static_cast<double>(mantissa(random) >> (i % 40)) / kPow10[decimals(random)];
    if (i % 7 == 0) v = static_cast<double>(i % 100000) / 1e4;  // ratios, watts
    if (v == std::trunc(v)) continue;
    char buffer[32];
    char* end = std::to_chars(buffer, buffer + sizeof(buffer), v).ptr;
    ASSERT_EQ(Value(v), std::string(buffer, end)) << i;
  }
}

TEST(Writer, IntegersTruncate) {
  EXPECT_EQ(Integer(1536.9), "1536");
  EXPECT_EQ(Integer(-2.5), "-2");
  EXPECT_EQ(Integer(69.85), "69");
  EXPECT_EQ(Integer(18446744073709551616.0), "18446744073709551616");
  EXPECT_EQ(Integer(std::numeric_limits<double>::quiet_NaN()), "NaN");
}

TEST(Writer, EscapesLabelValues) {
  std::string out;
  AppendLabelValue("a\\b\"c\nd", &out);
  EXPECT_EQ(out, "a\\\\b\\\"c\\nd");
  out.clear();
  AppendLabel("x", "plain", true, &out);
  AppendLabel("y", "", false, &out);
  EXPECT_EQ(out, "x=\"plain\",y=\"\"");
}

// Issue 39: a 60 KiB job id made /metrics 5.5 MB. Label values are cut to kMaxLabelValueBytes,
// on a UTF-8 boundary, marked, and keep a hash of the whole value so they stay distinct.
TEST(Writer, CapsLongLabelValuesOnACharacterBoundary) {
  const std::string fits(kMaxLabelValueBytes, 'j');
  EXPECT_EQ(CappedLabelValue(fits), fits);
  const std::string huge(60 << 10, 'j');
  std::string out;
  AppendLabelValue(huge, &out);
  EXPECT_EQ(out.size(), kMaxLabelValueBytes);
  EXPECT_EQ(out.substr(0, 236), std::string(236, 'j'));
  EXPECT_EQ(out.substr(236, kLabelValueMarker.size()), kLabelValueMarker);
  EXPECT_NE(CappedLabelValue(huge), CappedLabelValue(huge + "x"));  // differ past the cut
  EXPECT_EQ(CappedLabelValue(huge), CappedLabelValue(huge));
  // "é" (2 bytes) across the cut: the cut goes back to before it, never into it.
  std::string e;
  for (int i = 0; i < 200; ++i) e += "\xc3\xa9";
  const std::string capped = CappedLabelValue(std::string(235, 'a') + e);
  EXPECT_LE(capped.size(), kMaxLabelValueBytes);
  const std::string kept = capped.substr(0, capped.find(kLabelValueMarker));
  EXPECT_EQ(kept, std::string(235, 'a'));  // 235 + 2 > 236: the whole "é" goes
  // Escapes apply after the cap: a value of quotes stays within twice the cap.
  out.clear();
  AppendLabelValue(std::string(1000, '"'), &out);
  EXPECT_LE(out.size(), 2 * kMaxLabelValueBytes);
}

// Whatever reaches the writer, the exposition stays UTF-8 without raw control
// characters: NUL, CR and invalid bytes become U+FFFD (issue 15: a NUL in
// # HELP, Latin-1 help text that made Prometheus mark the target down).
TEST(Writer, ReplacesControlCharactersAndInvalidUtf8) {
  std::string out;
  AppendLabelValue(std::string("a\0b\rc\td\xff\xc3\xa9", 10), &out);
  EXPECT_EQ(out,
            "a\xef\xbf\xbd"
            "b\xef\xbf\xbd"
            "c\td\xef\xbf\xbd\xc3\xa9");
  out.clear();
  AppendHeader("m", std::string("caf\xe9\0", 5), FamilyType::kGauge, Format::kText, &out);
  EXPECT_EQ(out, "# HELP m caf\xef\xbf\xbd\xef\xbf\xbd\n# TYPE m gauge\n");
  out.clear();
  AppendLabelValue("\xe2\x82", &out);  // a sequence cut short: each byte replaced
  EXPECT_EQ(out, "\xef\xbf\xbd\xef\xbf\xbd");
}

TEST(Writer, HeadersPerFormat) {
  std::string out;
  AppendHeader("a_total", "Help \\ \"q\"\nnext", FamilyType::kCounter, Format::kText, &out);
  EXPECT_EQ(out, "# HELP a_total Help \\\\ \"q\"\\nnext\n# TYPE a_total counter\n");
  out.clear();
  AppendHeader("a_total", "Help \\ \"q\"", FamilyType::kCounter, Format::kOpenMetrics, &out);
  EXPECT_EQ(out, "# HELP a Help \\\\ \\\"q\\\"\n# TYPE a counter\n");
  out.clear();
  AppendHeader("DCGM_X", "h", FamilyType::kCounter, Format::kOpenMetrics, &out);
  EXPECT_EQ(out, "# HELP DCGM_X h\n# TYPE DCGM_X unknown\n");
  out.clear();
  AppendHeader("u", "h", FamilyType::kUnknown, Format::kText, &out);
  EXPECT_EQ(out, "# HELP u h\n# TYPE u untyped\n");
  out.clear();
  AppendHeader("g_total", "h", FamilyType::kGauge, Format::kOpenMetrics, &out);
  EXPECT_EQ(out, "# HELP g_total h\n# TYPE g_total gauge\n");
  out.clear();
  AppendHeader("x_info", "h", FamilyType::kInfo, Format::kOpenMetrics, &out);
  EXPECT_EQ(out, "# HELP x h\n# TYPE x info\n");
  out.clear();
  AppendHeader("x_info", "h", FamilyType::kInfo, Format::kText, &out);
  EXPECT_EQ(out, "# HELP x_info h\n# TYPE x_info gauge\n");
}

}  // namespace
}  // namespace gpuscope::prom
