#include "fleetreap/base/text.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace fleetreap {
namespace {

using Lines = std::vector<std::string>;

TEST(TextTest, Trim) {
  EXPECT_EQ(Trim(""), "");
  EXPECT_EQ(Trim(" \t\r\n"), "");
  EXPECT_EQ(Trim("  a b \r\n"), "a b");
  EXPECT_EQ(Trim("\va\v"), "\va\v");  // only spaces, tabs, CR and LF
}

TEST(TextTest, SplitLinesAtLfOnly) {
  struct Case {
    const char* text;
    Lines lines;
  };
  const Case kCases[] = {
      {"", {}},
      {"\n", {""}},
      {"a", {"a"}},
      {"a\n", {"a"}},
      {"a\n\nb", {"a", "", "b"}},
      {"a\r\nb\r\n", {"a", "b"}},
      {"a\rb\n", {"a\rb"}},  // a lone CR is no line end
      {"a\r\r\n", {"a\r"}},  // only one CR comes off
      {"a\vb\fc", {"a\vb\fc"}},
  };
  for (const Case& c : kCases) EXPECT_EQ(SplitLines(c.text), c.lines) << c.text;
}

TEST(TextTest, SplitLinesLikePythonEndsLinesAsStrSplitlines) {
  struct Case {
    const char* text;
    Lines lines;
  };
  const Case kCases[] = {
      {"", {}},
      {"\n", {""}},
      {"a\n", {"a"}},
      {"a\n\nb", {"a", "", "b"}},
      {"a\r\nb", {"a", "b"}},
      {"a\rb", {"a", "b"}},
      {"a\r\rb", {"a", "", "b"}},
      {"a\vb\fc", {"a", "b", "c"}},
      {"a\x1c"
       "b\x1d"
       "c\x1e"
       "d\x1f"
       "e",
       {"a", "b", "c",
        "d\x1f"
        "e"}},
  };
  for (const Case& c : kCases) EXPECT_EQ(SplitLinesLikePython(c.text), c.lines) << c.text;
}

TEST(TextTest, JoinKeepsEmptyPartsJoinNonEmptyDropsThem) {
  struct Case {
    Lines parts;
    const char* joined;
    const char* non_empty;
  };
  const Case kCases[] = {
      {{}, "", ""},
      {{"a"}, "a", "a"},
      {{"a", "b"}, "a, b", "a, b"},
      {{"a", "", "b"}, "a, , b", "a, b"},
      {{"", "a"}, ", a", "a"},
      {{"", ""}, ", ", ""},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(Join(c.parts, ", "), c.joined);
    EXPECT_EQ(JoinNonEmpty(c.parts, ", "), c.non_empty);
  }
}

TEST(TextTest, IsDigitsAndParseDigits) {
  struct Case {
    const char* text;
    size_t max_digits;
    bool ok;
    int64_t value;
  };
  const Case kCases[] = {
      {"0", 9, true, 0},
      {"007", 9, true, 7},
      {"123456789", 9, true, 123456789},
      {"1234567890", 9, false, 0},  // one digit too many
      {"999999999999999", 15, true, 999999999999999},
      {"", 9, false, 0},
      {"+1", 9, false, 0},
      {"-1", 9, false, 0},
      {" 1", 9, false, 0},
      {"1 ", 9, false, 0},
      {"1.5", 9, false, 0},
      {"0x1", 9, false, 0},
      {"\xd9\xa3", 9, false, 0},  // a non-ASCII digit
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(IsDigits(c.text, c.max_digits), c.ok) << c.text;
    int64_t wide = -1;
    EXPECT_EQ(ParseDigits(c.text, c.max_digits, &wide), c.ok) << c.text;
    EXPECT_EQ(wide, c.ok ? c.value : -1) << c.text;
    if (c.max_digits <= 9) {
      int narrow = -1;
      EXPECT_EQ(ParseDigits(c.text, c.max_digits, &narrow), c.ok) << c.text;
      EXPECT_EQ(narrow, c.ok ? static_cast<int>(c.value) : -1) << c.text;
    }
  }
  int narrow = -1;
  EXPECT_FALSE(ParseDigits("1", 10, &narrow));  // could overflow an int
  int64_t wide = -1;
  EXPECT_FALSE(ParseDigits("1", 19, &wide));
}

TEST(TextTest, ParseUnsignedBoundsTheValueNotTheDigits) {
  const uint64_t kMax64 = std::numeric_limits<uint64_t>::max();
  struct Case {
    const char* text;
    uint64_t max;
    bool ok;
    uint64_t value;
  };
  const Case kCases[] = {
      {"0", 9999, true, 0},
      {"9999", 9999, true, 9999},
      {"10000", 9999, false, 0},
      {"00000000000000009999", 9999, true, 9999},  // 20 digits
      {"000000000000000009999", 9999, false, 0},   // 21 digits
      {"1073741823", 0x3fffffff, true, 0x3fffffff},
      {"1073741824", 0x3fffffff, false, 0},
      {"18446744073709551615", kMax64, true, kMax64},
      {"18446744073709551616", kMax64, false, 0},  // overflow
      {"99999999999999999999", kMax64, false, 0},
      {"5", 4, false, 0},
      {"", kMax64, false, 0},
      {"+1", kMax64, false, 0},
      {" 1", kMax64, false, 0},
      {"1a", kMax64, false, 0},
  };
  for (const Case& c : kCases) {
    uint64_t value = 77;
    EXPECT_EQ(ParseUnsigned(c.text, c.max, &value), c.ok) << c.text;
    EXPECT_EQ(value, c.ok ? c.value : 77) << c.text;
  }
}

TEST(TextTest, QuoteForMessageAndEscapeControlBytes) {
  EXPECT_EQ(QuoteForMessage("a\tb", 10), "\"a?b\"");
  EXPECT_EQ(QuoteForMessage("abcdef", 3), "\"abc...\"");
  EXPECT_EQ(EscapeControlBytes("a\\\x1b\n", 10, true), "a\\\\\\x1b\\n");
  EXPECT_EQ(EscapeControlBytes("a\\", 10, false), "a\\");
  EXPECT_EQ(EscapeControlBytes("abcdef", 2, false), "ab...");
}

}  // namespace
}  // namespace fleetreap
