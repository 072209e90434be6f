#include "fleetreap/cli/run_identity.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(RunIdentityTest, RunIdIsTheUtcSecondAndRandomBits) {
  const auto start = std::chrono::system_clock::time_point(
      std::chrono::milliseconds(1796007845123));  // 2026-11-30T03:04:05.123Z
  EXPECT_EQ(FormatRunId(start, 0x4f1c2a), "20261130T030405Z-4f1c2a");
  EXPECT_EQ(FormatRunId(start, 0xff000001), "20261130T030405Z-000001");
}

TEST(RunIdentityTest, OperatorIsTheSudoUserBehindRoot) {
  EXPECT_EQ(OperatorName(1000, "alice", {{"SUDO_USER", "bob"}}), "alice");
  EXPECT_EQ(OperatorName(0, "root", {{"SUDO_USER", "bob"}}), "bob via sudo");
  EXPECT_EQ(OperatorName(0, "root", {}), "root");
  EXPECT_EQ(OperatorName(4242, "", {}), "4242");
}

TEST(RunIdentityTest, EveryRunGetsItsOwnId) {
  AuditRequest a = RunAuditFor({});
  AuditRequest b = RunAuditFor({});
  EXPECT_TRUE(a.enabled());
  EXPECT_NE(a.run_id, b.run_id);
  EXPECT_FALSE(a.controller.empty());
  EXPECT_FALSE(a.operator_name.empty());
}

}  // namespace
}  // namespace fleetreap
