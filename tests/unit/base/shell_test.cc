#include "fleetreap/base/shell.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

TEST(TransportTest, ShellQuoteSurvivesHostileValues) {
  EXPECT_EQ(ShellQuote("plain"), "'plain'");
  EXPECT_EQ(ShellQuote("a'b"), "'a'\\''b'");
  EXPECT_EQ(ShellQuote("$(reboot); `x`"), "'$(reboot); `x`'");
}

// What sh -c runs: the script from the here-document on fd 9, read by ".".
constexpr char kReader[] = "/bin/sh -c 'exec 9<&0 </dev/null; . /proc/self/fd/9' <<";

// The here-document's first lines: fd 9 closed, then the start record.
constexpr char kStart[] = R"(exec 9<&-
printf '%s\0' 'start:\\ $HOME `id` "q"'
)";

TEST(TransportTest, BoundedCommandUsesAbsolutePathsAndACleanEnvironment) {
  EXPECT_EQ(
      BoundedCommand("echo hi", std::chrono::milliseconds(1500), false),
      std::string("\\unset -f exec 2>/dev/null; \\exec /usr/bin/timeout -k 2 2 /usr/bin/env -i "
                  "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
                  "LC_ALL=C ") +
          kReader + "'FLEETREAP_SCRIPT_END'\n" + kStart + "echo hi\nFLEETREAP_SCRIPT_END\n");
}

TEST(TransportTest, BoundedCommandBoundsTheRootScriptInsideSudo) {
  EXPECT_EQ(BoundedCommand("id\n", std::chrono::milliseconds(60000), true),
            std::string("\\unset -f exec 2>/dev/null; \\exec /usr/bin/timeout -k 2 60 "
                        "/usr/bin/sudo -n /usr/bin/env -i "
                        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "
                        "LC_ALL=C /usr/bin/timeout -k 1 60 ") +
                kReader + "'FLEETREAP_SCRIPT_END'\n" + kStart + "id\nFLEETREAP_SCRIPT_END\n");
}

// A value of the host's making in the script (a unit's name, quoted) can
// hold the end line; the here-document then ends at another, and only there.
TEST(TransportTest, BoundedCommandEndsTheScriptAtALineItDoesNotHold) {
  const std::string script =
      "echo 'a\nFLEETREAP_SCRIPT_END\nrm -rf /x\nFLEETREAP_SCRIPT_END_1\n'\nFLEETREAP_SCRIPT_END_2";
  const std::string command = BoundedCommand(script, std::chrono::milliseconds(1000), false);
  const std::string head = std::string(kReader) + "'FLEETREAP_SCRIPT_END_3'\n";
  ASSERT_NE(command.find(head), std::string::npos) << command;
  EXPECT_EQ(command.substr(command.size() - 24), "\nFLEETREAP_SCRIPT_END_3\n");
  // The end line is there once, at the end: the body holds all of the script.
  const std::string body = command.substr(command.find(head) + head.size());
  EXPECT_EQ(body, kStart + script + "\nFLEETREAP_SCRIPT_END_3\n");
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
