#include "fleetreap/remote/stop_units.h"

#include <gtest/gtest.h>

#include "support/script_runner.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(StopUnitsTest, HostileUnitNamesReachSystemctlAsOneWord) {
  ScriptRunner runner;
  std::string out = runner.Run(StopUnitsScript(kHostile, milliseconds(5000)));
  std::vector<UnitStop> stops;
  ASSERT_TRUE(ParseStopUnitsOutput(out, kHostile, &stops).ok()) << out;
  ASSERT_EQ(stops.size(), kHostile.size());
  std::string expected_args;
  for (const std::string& unit : kHostile) {
    expected_args += "stop\n--\n" + unit + "\n";
  }
  EXPECT_EQ(runner.Args(), expected_args);
  for (int i = 1; i <= 7; ++i) {
    EXPECT_FALSE(runner.Exists("pwned" + std::to_string(i))) << i;
  }
  EXPECT_EQ(stops[0].exit_code, 0);
  EXPECT_EQ(stops[3].unit, kHostile[3]);
}

}  // namespace
}  // namespace fleetreap
