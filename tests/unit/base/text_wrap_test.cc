#include "fleetreap/base/text_wrap.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

TEST(TextWrapTest, CutAfterKeepsEachSeparator) {
  EXPECT_EQ(CutAfter("a, b, c", ", "), (std::vector<std::string>{"a, ", "b, ", "c"}));
  EXPECT_EQ(CutAfter("", " "), std::vector<std::string>{});
  EXPECT_EQ(CutAfter("one", " "), std::vector<std::string>{"one"});
}

TEST(TextWrapTest, FillLinesBreaksBeforeThePieceThatWouldPassTheWidth) {
  // A trailing space does not count at a line's end: "aaaa bbbb" is 9.
  EXPECT_EQ(FillLines({"aaaa ", "bbbb ", "cc"}, 0, 2, 9), "aaaa bbbb\n  cc\n");
  // The first line starts at column "first", the rest at "indent".
  EXPECT_EQ(FillLines({"aaaa ", "bbbb ", "cc"}, 4, 2, 9), "aaaa\n  bbbb cc\n");
  // A piece longer than a line stays whole.
  EXPECT_EQ(FillLines({"x ", "0123456789abc ", "y"}, 0, 1, 5), "x\n 0123456789abc\n y\n");
}

TEST(TextWrapTest, WrapWordsIndentsEveryLine) {
  EXPECT_EQ(WrapWords("why the GPUs were held", 6, 18), "why the GPUs\n      were held\n");
}

TEST(TextWrapTest, WrapLineKeepsALineThatFitsOrHasNoWidth) {
  EXPECT_EQ(WrapLine("gpu01 failed 1.2 s", 4, 80), "gpu01 failed 1.2 s\n");
  EXPECT_EQ(WrapLine("exactly ten", 4, 11), "exactly ten\n");
  EXPECT_EQ(WrapLine(std::string(200, 'x') + " y", 4, 0), std::string(200, 'x') + " y\n");
  EXPECT_EQ(WrapLine("gpu01 failed 1.2 s: sudo", 4, 12), "gpu01 failed\n    1.2 s:\n    sudo\n");
}

}  // namespace
}  // namespace fleetreap
