#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <string>

#include "fleetreap/transport/ssh_known_hosts.h"
#include "support/ssh_test_server.h"

namespace fleetreap {
namespace {

const char kKey[] =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIE7PQ3snm05cXDhEakJxYkX10xY9mDXkWHKYljysahf8";

class KnownHostsFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-khfile-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { Shell("rm -rf " + dir_); }
  std::string dir_;
};

int Mode(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? static_cast<int>(info.st_mode & 07777) : -1;
}

TEST_F(KnownHostsFileTest, AnExplicitPathIsCheckedBeforeAnyHost) {
  EXPECT_EQ(
      CheckKnownHostsFile(dir_ + "/nodir/sub/kh", true).ToString(),
      "usage: --known-hosts " + dir_ + "/nodir/sub/kh: no such directory " + dir_ + "/nodir/sub");
  EXPECT_EQ(CheckKnownHostsFile(dir_ + "/nodir/kh", false).kind(), ErrorKind::kUsage);
  EXPECT_EQ(CheckKnownHostsFile(dir_, false).ToString(),
            "usage: --known-hosts " + dir_ + ": is a directory");
  EXPECT_TRUE(CheckKnownHostsFile(dir_ + "/kh", true).ok());  // created on the first key
  EXPECT_TRUE(CheckKnownHostsFile(dir_ + "/kh", false).ok());
}

TEST_F(KnownHostsFileTest, AppendCreatesAMissingSshDirectory0700) {
  const std::string ssh = dir_ + "/.ssh";
  bool appended = false;
  ASSERT_TRUE(AppendKnownHostsEntry(ssh + "/known_hosts", "gpu01", kKey, &appended).ok());
  EXPECT_TRUE(appended);
  EXPECT_EQ(Mode(ssh), 0700);
  EXPECT_EQ(Mode(ssh + "/known_hosts"), 0600);
  ASSERT_TRUE(AppendKnownHostsEntry(ssh + "/known_hosts", "gpu01", kKey, &appended).ok());
  EXPECT_FALSE(appended);  // already there: nothing accepted
  // One level only: a missing parent is a typo, not a directory to make.
  Status deep = AppendKnownHostsEntry(dir_ + "/a/b/known_hosts", "gpu01", kKey);
  EXPECT_EQ(deep.ToString(), "internal: no such directory " + dir_ + "/a");
}

TEST_F(KnownHostsFileTest, AcceptNewNeedsAFileItCanWrite) {
  if (getuid() == 0) GTEST_SKIP() << "root writes every file";
  const std::string path = dir_ + "/kh";
  std::ofstream(path) << "";
  chmod(path.c_str(), 0444);
  EXPECT_EQ(CheckKnownHostsFile(path, true).kind(), ErrorKind::kUsage);
  EXPECT_TRUE(CheckKnownHostsFile(path, false).ok());
}

}  // namespace
}  // namespace fleetreap
