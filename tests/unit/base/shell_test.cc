#include "fleetreap/base/shell.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(TransportTest, ShellQuoteSurvivesHostileValues) {
  EXPECT_EQ(ShellQuote("plain"), "'plain'");
  EXPECT_EQ(ShellQuote("a'b"), "'a'\\''b'");
  EXPECT_EQ(ShellQuote("$(reboot); `x`"), "'$(reboot); `x`'");
}

// The start line as the login shell receives it, inside the script's quotes.
constexpr char kStart[] = R"(printf '\''%s\0'\'' '\''start:\\ $HOME `id` "q"'\''
)";

TEST(TransportTest, BoundedCommandUsesAbsolutePathsAndACleanEnvironment) {
  EXPECT_EQ(
      BoundedCommand("echo hi", std::chrono::milliseconds(1500), false),
      std::string("\\unset -f exec 2>/dev/null; \\exec /usr/bin/timeout -k 2 2 /usr/bin/env -i "
                  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
                  "LC_ALL=C /bin/sh -c '") +
          kStart + "echo hi'");
}

TEST(TransportTest, BoundedCommandBoundsTheRootScriptInsideSudo) {
  EXPECT_EQ(BoundedCommand("id", std::chrono::milliseconds(60000), true),
            std::string("\\unset -f exec 2>/dev/null; \\exec /usr/bin/timeout -k 2 60 "
                        "/usr/bin/sudo -n /usr/bin/env -i "
                        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
                        "LC_ALL=C /usr/bin/timeout -k 1 60 /bin/sh -c '") +
                kStart + "id'");
}

TEST(TransportTest, CheckStartRecordRemovesExactlyTheStartRecord) {
  std::string out = StartRecordBytes() + std::string("end\0", 4);
  ASSERT_TRUE(CheckStartRecord(&out, "").ok());
  EXPECT_EQ(out, std::string("end\0", 4));
}

TEST(TransportTest, CheckStartRecordNamesWhatTheLoginShellDid) {
  struct Case {
    std::string out;
    std::string err;
    std::string message;
  };
  const Case kCases[] = {
      {"Welcome to gpu01\n" + StartRecordBytes(), "",
       "login shell: 17 bytes came before the command's output (a dotfile of the login account "
       "prints to stdout?)"},
      {std::string("start:\\ $HOME `id` \"q\"\0", 23), "",
       "login shell: the command's quoting came back changed (the login account's shell is not "
       "a POSIX shell: fish?)"},
      {"", "Unmatched '''.\n",
       "login shell: the command did not start (the login account's shell must be a POSIX "
       "shell: sh, bash, dash, zsh, ksh): Unmatched '''."},
      {"", "",
       "login shell: the command did not start (the login account's shell must be a POSIX "
       "shell: sh, bash, dash, zsh, ksh)"},
  };
  for (const Case& c : kCases) {
    std::string out = c.out;
    Status status = CheckStartRecord(&out, c.err);
    EXPECT_EQ(status.kind(), ErrorKind::kCommandFailed);
    EXPECT_EQ(status.message(), c.message);
  }
}

}  // namespace
}  // namespace fleetreap
