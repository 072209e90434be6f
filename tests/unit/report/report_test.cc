#include "fleetreap/report/report.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(ReportTest, ExitCodeBits) {
  RunReport run;
  EXPECT_EQ(ExitCodeFor(run), 0);
  run.hosts.resize(3);
  run.hosts[0].status = HostStatus::kClean;
  run.hosts[1].status = HostStatus::kDirty;
  run.hosts[2].status = HostStatus::kClean;
  EXPECT_EQ(ExitCodeFor(run), 1);
  run.hosts[2].status = HostStatus::kUnreachable;
  EXPECT_EQ(ExitCodeFor(run), 3);
  run.dry_run = true;
  EXPECT_EQ(ExitCodeFor(run), 2);
}

TEST(ReportTest, StoppedWavesSetBit4AndGiveTheReason) {
  RunReport run;
  run.hosts.resize(1);
  run.hosts[0].status = HostStatus::kDirty;
  run.not_started = {"gpu02"};
  EXPECT_EQ(HostsWithoutResult(run)[0].why, "interrupted");
  run.stopped = "stopped: every host of wave 1 of 2 failed";
  EXPECT_EQ(ExitCodeFor(run), 1 | 2 | 4);
  EXPECT_EQ(HostsWithoutResult(run)[0].why, run.stopped);
}

}  // namespace
}  // namespace fleetreap
