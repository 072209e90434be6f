#include "fleetreap/base/shell.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(TransportTest, ShellQuoteSurvivesHostileValues) {
  EXPECT_EQ(ShellQuote("plain"), "'plain'");
  EXPECT_EQ(ShellQuote("a'b"), "'a'\\''b'");
  EXPECT_EQ(ShellQuote("$(reboot); `x`"), "'$(reboot); `x`'");
}

TEST(TransportTest, BoundedCommandWrapsWithTimeoutAndSudo) {
  EXPECT_EQ(BoundedCommand("echo hi", std::chrono::milliseconds(1500), false),
            "timeout -k 2 2 sh -c 'echo hi'");
  EXPECT_EQ(BoundedCommand("id", std::chrono::milliseconds(60000), true),
            "timeout -k 2 60 sudo -n sh -c 'id'");
}

}  // namespace
}  // namespace fleetreap
