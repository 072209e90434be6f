#include "fleetreap/base/duration.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(DurationTest, Parses) {
  struct Row {
    const char* text;
    bool ok;
    long long ms;
  };
  const Row rows[] = {{"10s", true, 10000}, {"250ms", true, 250}, {"1.5s", true, 1500},
                      {"2m", true, 120000}, {"7", true, 7000},    {"0", true, 0},
                      {"", false, 0},       {"s", false, 0},      {"-1s", false, 0},
                      {"1.2.3s", false, 0}, {"10 s", false, 0},   {"5d", false, 0}};
  for (const Row& row : rows) {
    std::chrono::milliseconds out{-1};
    EXPECT_EQ(ParseDuration(row.text, &out), row.ok) << row.text;
    if (row.ok) {
      EXPECT_EQ(out.count(), row.ms) << row.text;
    }
  }
}

}  // namespace
}  // namespace fleetreap
