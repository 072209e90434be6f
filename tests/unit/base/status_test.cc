#include "fleetreap/base/status.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fleetreap
