// Text checks for input that reaches the exposition or an error message:
// UTF-8 validation, control characters, and a short escaped excerpt of
// untrusted input for messages (never echo raw bytes back); Concat; and the
// ASCII helpers every parser shares (Trim, Lower, EqualsIgnoreCase), which
// never depend on the locale.
//
// Thread safety: pure functions.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::base {

// The byte offset of the first byte that is not part of valid UTF-8 (no
// overlong forms, no surrogates, nothing above U+10FFFF); nullopt when valid.
std::optional<std::size_t> FindInvalidUtf8(std::string_view text);

// The length of the valid UTF-8 sequence starting at text[i] (1-4), or 0 when
// the bytes there are not valid UTF-8. `i` must be < text.size().
std::size_t Utf8SequenceLength(std::string_view text, std::size_t i);

// The offset of the first ASCII control character (0x00-0x1f, 0x7f) other
// than tab; nullopt when none.
std::optional<std::size_t> FindControlChar(std::string_view text);

// At most `max_chars` characters of `text` for a message: printable ASCII is
// kept, `"`, `\` and every other byte are escaped (\n, \t, \xNN), and "..."
// marks a cut. Always valid UTF-8 and free of control characters.
std::string Excerpt(std::string_view text, std::size_t max_chars = 64);

// What is wrong with text that will be written into the exposition (help
// text, label values): "" when it is valid UTF-8 without control characters.
std::string TextProblem(std::string_view text);

// `text` safe to print on a terminal: every control character (C0, DEL, and
// C1 written as UTF-8, U+0080-U+009F) and every byte that is not UTF-8 becomes
// U+FFFD, so text from the network can neither send escape sequences nor fake
// a line. `keep_lines` keeps newline and tab (a multi-line answer printed as
// it came).
std::string TerminalText(std::string_view text, bool keep_lines = false);

// What is wrong with the shape of JSON `text` from the network, checked by a
// cheap scan before it is parsed: "" when it nests at most `max_depth` deep and
// holds at most `max_values` values (counted as the commas, colons and opening
// brackets outside strings: an upper bound). nlohmann's parser makes a value
// of 16 bytes and more per level and per element: 500 MB of '[' took a client
// to 22 GB, 63 MB of "0," to 1 GB.
std::string JsonShapeProblem(std::string_view text, std::size_t max_depth, std::size_t max_values);

// The pieces joined, in one allocation. Use it for `"literal" + std::string`
// chains: GCC 12 at -O3 reports their inlined insert-at-front as an
// overlapping memcpy (-Wrestrict, a false positive fixed in GCC 13).
std::string Concat(std::initializer_list<std::string_view> pieces);

// ASCII white space: what std::isspace matches in the "C" locale.
inline constexpr std::string_view kAsciiSpace = " \t\n\v\f\r";

// `text` without its leading and trailing characters from `chars`. A caller
// that must trim less than white space says which characters it trims
// (dcgm-exporter's counters CSV: spaces only, Trim(field, " ")).
std::string_view Trim(std::string_view text, std::string_view chars = kAsciiSpace);

// The first line of `text`, without its '\n', and `text` advanced past it
// (to empty after the last line). `while (!text.empty())` around it visits
// every line; a trailing '\n' adds no empty one.
std::string_view PopLine(std::string_view& text);

// `text` with ASCII A-Z turned into a-z; every other byte (UTF-8 included)
// kept as it is.
std::string Lower(std::string_view text);

// Whether `a` and `b` are equal when ASCII letters are compared without case
// (HTTP header names, media types, content codings).
bool EqualsIgnoreCase(std::string_view a, std::string_view b);

}  // namespace gpuscope::base
