#include <gtest/gtest.h>

#include <cctype>
#include <string>

#include "base/text.h"

namespace gpuscope::base {
namespace {

TEST(Text, Utf8Validation) {
  EXPECT_EQ(FindInvalidUtf8("plain ascii"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"), std::nullopt);
  EXPECT_EQ(FindInvalidUtf8("caf\xe9"), 3u);                     // Latin-1
  EXPECT_EQ(FindInvalidUtf8("\xc0\xaf"), 0u);                    // overlong '/'
  EXPECT_EQ(FindInvalidUtf8("\xe0\x80\xaf"), 0u);                // overlong, 3 bytes
  EXPECT_EQ(FindInvalidUtf8("ab\xed\xa0\x80"), 2u);              // surrogate
  EXPECT_EQ(FindInvalidUtf8("\xf4\x90\x80\x80"), 0u);            // above U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("x\xe2\x82"), 1u);                   // cut short
  EXPECT_EQ(FindInvalidUtf8("\x80"), 0u);                        // lone continuation
  EXPECT_EQ(FindInvalidUtf8("\xf4\x8f\xbf\xbf"), std::nullopt);  // U+10FFFF
}

TEST(Text, ControlCharacters) {
  EXPECT_EQ(FindControlChar("tab\tis fine"), std::nullopt);
  EXPECT_EQ(FindControlChar(std::string("a\0b", 3)), 1u);
  EXPECT_EQ(FindControlChar("line\nbreak"), 4u);
  EXPECT_EQ(FindControlChar("del\x7f"), 3u);
  EXPECT_EQ(TextProblem("fine \xc3\xa9"), "");
  EXPECT_EQ(TextProblem("caf\xe9"), "is not valid UTF-8 (byte 4)");
  EXPECT_EQ(TextProblem(std::string("a\0", 2)), "has a control character (byte 2)");
}

TEST(Text, ExcerptIsShortEscapedAndPrintable) {
  EXPECT_EQ(Excerpt("DCGM_FI_DEV_GPU_TEMP"), "DCGM_FI_DEV_GPU_TEMP");
  EXPECT_EQ(Excerpt(std::string("a\0\"\\\n\t\xff", 7)), "a\\x00\\\"\\\\\\n\\t\\xff");
  const std::string long_name(1 << 20, 'A');
  EXPECT_EQ(Excerpt(long_name), std::string(64, 'A') + "...");
  EXPECT_EQ(Excerpt("abcdef", 3), "abc...");
  const std::string binary = Excerpt(std::string("\x01\x02\x80\xfe", 4));
  EXPECT_EQ(FindInvalidUtf8(binary), std::nullopt);
  EXPECT_EQ(FindControlChar(binary), std::nullopt);
}

TEST(Text, TerminalTextReplacesWhatCouldDriveATerminal) {
  const std::string bad = "\xef\xbf\xbd";  // U+FFFD
  const std::string esc = "\x1b", bel = "\x07", csi = "\xc2\x9b";
  EXPECT_EQ(TerminalText("job-4242 caf\xc3\xa9 \xe2\x82\xac"), "job-4242 caf\xc3\xa9 \xe2\x82\xac");
  EXPECT_EQ(TerminalText("a" + esc + "]0;owned" + bel + "b"), "a" + bad + "]0;owned" + bad + "b");
  EXPECT_EQ(TerminalText("a" + csi + "2Jb"), "a" + bad + "2Jb");  // C1 as UTF-8
  EXPECT_EQ(TerminalText("\xc2\xa0x\x7f"), "\xc2\xa0x" + bad);    // NBSP kept, DEL not
  EXPECT_EQ(TerminalText("a\x9b-\xff"), "a" + bad + "-" + bad);   // not UTF-8
  EXPECT_EQ(TerminalText("one\ntwo\tthree\r"), "one" + bad + "two" + bad + "three" + bad);
  EXPECT_EQ(TerminalText("one\ntwo\tthree\r", /*keep_lines=*/true), "one\ntwo\tthree" + bad);
}

TEST(Text, JsonShapeCountsDepthAndValuesOutsideStrings) {
  const std::string doc = R"({"a": [[1], {"b": []}]})";  // 4 deep; counts 8
  EXPECT_EQ(JsonShapeProblem(doc, 4, 8), "");
  EXPECT_EQ(JsonShapeProblem(doc, 3, 8), "nests deeper than 3 levels");
  EXPECT_EQ(JsonShapeProblem(doc, 4, 7), "holds more than 7 values");
  EXPECT_EQ(JsonShapeProblem(R"(["[[[[\",{{{{:", "]]"])", 1, 2), "");
  EXPECT_EQ(JsonShapeProblem(std::string(100000, '['), 32, 1000000), "nests deeper than 32 levels");
  EXPECT_EQ(JsonShapeProblem("[" + std::string(100000, ',') + "]", 32, 1000),
            "holds more than 1000 values");
  EXPECT_EQ(JsonShapeProblem(std::string(100000, ']'), 0, 0), "");
}

TEST(Text, TrimDropsAsciiWhiteSpaceOrTheCharactersGiven) {
  EXPECT_EQ(Trim(" \t\r\n\v\fgzip ; q=1\r\n"), "gzip ; q=1");
  EXPECT_EQ(Trim("plain"), "plain");
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\n"), "");
  EXPECT_EQ(Trim("\xc2\xa0x\xc2\xa0"), "\xc2\xa0x\xc2\xa0");  // no-break space is not ASCII
  // Only the characters given: dcgm-exporter's CSV keeps a tab.
  EXPECT_EQ(Trim("  \tDCGM_FI_DEV_GPU_TEMP \t ", " "), "\tDCGM_FI_DEV_GPU_TEMP \t");
  EXPECT_EQ(Trim("   ", " "), "");
  // The default set is std::isspace's in the "C" locale, byte for byte.
  for (int c = 0; c < 256; ++c) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_EQ(Trim(one).empty(), std::isspace(c) != 0) << c;
  }
}

TEST(Text, LowerAndEqualsIgnoreCaseFoldOnlyAsciiLetters) {
  EXPECT_EQ(Lower("Accept-Encoding: GZip, X-GZIP"), "accept-encoding: gzip, x-gzip");
  EXPECT_EQ(Lower("\xc3\x89T\xc3\x89 @[`{"), "\xc3\x89t\xc3\x89 @[`{");  // UTF-8 kept
  EXPECT_EQ(Lower(""), "");
  for (int c = 0; c < 256; ++c) {
    const std::string one(1, static_cast<char>(c));
    EXPECT_EQ(Lower(one), std::string(1, static_cast<char>(std::tolower(c)))) << c;
  }
  EXPECT_TRUE(EqualsIgnoreCase("Content-Length", "content-LENGTH"));
  EXPECT_TRUE(EqualsIgnoreCase("", ""));
  EXPECT_FALSE(EqualsIgnoreCase("text/plain", "text/plai"));
  EXPECT_FALSE(EqualsIgnoreCase("text/plain", "text/plaim"));
  EXPECT_FALSE(EqualsIgnoreCase("@", "`"));  // 0x40 and 0x60 differ by the case bit only
}

}  // namespace
TEST(Concat, JoinsPiecesInOrder) {
  std::string middle = "b";
  EXPECT_EQ(Concat({"a", middle, std::string_view("c"), ""}), "abc");
  EXPECT_EQ(Concat({}), "");
}

TEST(Text, PopLineVisitsEveryLineOnce) {
  std::string_view text = "0::/a\n\nlast";
  EXPECT_EQ(PopLine(text), "0::/a");
  EXPECT_EQ(PopLine(text), "");
  EXPECT_EQ(PopLine(text), "last");
  EXPECT_TRUE(text.empty());
  text = "one\n";  // a trailing newline adds no empty line
  EXPECT_EQ(PopLine(text), "one");
  EXPECT_TRUE(text.empty());
}

}  // namespace gpuscope::base
