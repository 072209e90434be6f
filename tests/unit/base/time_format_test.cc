#include "fleetreap/base/time_format.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(TimeFormatTest, EachSecondsFormKeepsItsRounding) {
  struct Case {
    long long ms;
    const char* timeout;     // rounded up, at least 1
    const char* fractional;  // three decimals, at least 0.010
    const char* millis;      // %.3f
    const char* seconds;     // %.1f s
  };
  const Case kCases[] = {
      {0, "1", "0.010", "0.000", "0.0 s"},    {5, "1", "0.010", "0.005", "0.0 s"},
      {150, "1", "0.150", "0.150", "0.1 s"},  {999, "1", "0.999", "0.999", "1.0 s"},
      {1000, "1", "1.000", "1.000", "1.0 s"}, {1001, "2", "1.001", "1.001", "1.0 s"},
      {1250, "2", "1.250", "1.250", "1.2 s"}, {61000, "61", "61.000", "61.000", "61.0 s"},
      {-5, "1", "0.010", "-0.005", "-0.0 s"},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(TimeoutSeconds(milliseconds(c.ms)), c.timeout) << c.ms;
    EXPECT_EQ(FractionalSeconds(milliseconds(c.ms)), c.fractional) << c.ms;
    EXPECT_EQ(FormatSecondsMillis(milliseconds(c.ms)), c.millis) << c.ms;
    EXPECT_EQ(FormatSeconds(milliseconds(c.ms)), c.seconds) << c.ms;
  }
}

// FormatUtcTimestamp: ReportJsonTest covers it.

}  // namespace
}  // namespace fleetreap
