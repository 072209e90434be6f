#include "fleetreap/base/shell.h"
#include "fleetreap/base/status.h"

#include <gtest/gtest.h>

#include "fleetreap/report/report.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {
namespace {

TEST(StatusTest, KeepsUnreachableApartFromFailed) {
  struct Row {
    ErrorKind kind;
    const char* name;
    bool unreachable;
    bool transient;
  };
  const Row rows[] = {
      {ErrorKind::kDns, "dns", true, false},
      {ErrorKind::kRefused, "refused", true, true},
      {ErrorKind::kConnectTimeout, "connect_timeout", true, true},
      {ErrorKind::kBannerTimeout, "banner_timeout", true, true},
      {ErrorKind::kKex, "kex", true, false},
      {ErrorKind::kHostKey, "host_key", true, false},
      {ErrorKind::kAuth, "auth", true, false},
      {ErrorKind::kSudo, "sudo", false, false},
      {ErrorKind::kCommandTimeout, "command_timeout", false, false},
      {ErrorKind::kConnectionLost, "connection_lost", true, true},
  };
  for (const Row& row : rows) {
    EXPECT_STREQ(ErrorKindName(row.kind), row.name);
    EXPECT_EQ(IsUnreachable(row.kind), row.unreachable) << row.name;
    EXPECT_EQ(IsTransient(row.kind), row.transient) << row.name;
  }
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status::Error(ErrorKind::kAuth, "denied").ToString(), "auth: denied");
}

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

}  // namespace
}  // namespace fleetreap
