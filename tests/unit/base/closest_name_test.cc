#include "fleetreap/base/closest_name.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(ClosestNameTest, TheOneNearestNameOrNone) {
  const std::vector<std::string> settings = {"term_grace", "kill_grace", "settle", "steps"};
  EXPECT_EQ(ClosestName("kil_grace", settings), "kill_grace");
  EXPECT_EQ(ClosestName("setlte", settings), "settle");  // a transposition is one edit
  EXPECT_EQ(ClosestName("escalate", settings), "");
  EXPECT_EQ(ClosestName("settle", settings), "settle");
  // Two names equally near: no guess.
  const std::vector<std::string> hosts = {"gpu09", "gpu19", "gpu01"};
  EXPECT_EQ(ClosestName("gpu99", hosts, 1), "");
  EXPECT_EQ(ClosestName("gpu1", hosts, 1), "");  // gpu01 and gpu19
  EXPECT_EQ(ClosestName("gpu1", {"gpu01", "gpu02", "gpu03"}, 1), "gpu01");
  EXPECT_EQ(ClosestName("gpu7", {"gpu07", "gpu07"}, 1), "gpu07");
}

TEST(ClosestNameTest, EditDistanceIsCapped) {
  EXPECT_EQ(EditDistance("abc", "abc", 2), 0u);
  EXPECT_EQ(EditDistance("abc", "acb", 2), 1u);
  EXPECT_EQ(EditDistance("abc", "xyz", 2), 3u);
  EXPECT_EQ(EditDistance("a", "abcdef", 2), 3u);
}

}  // namespace
}  // namespace fleetreap
