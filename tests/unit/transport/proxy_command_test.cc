#include "fleetreap/transport/proxy_command.h"

#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TEST(ProxyCommandTest, ExpandsOpenSshTokens) {
  ProxyTokens tokens;
  tokens.host = "10.1.2.3";
  tokens.original_host = "gpu07";
  tokens.port = 2222;
  tokens.user = "gpuops";
  tokens.local_user = "ci";
  struct Row {
    const char* command;
    const char* expanded;  // nullptr: an error containing "error"
    const char* error;
  };
  const Row rows[] = {
      {"ssh -W %h:%p bastion", "ssh -W 10.1.2.3:2222 bastion", ""},
      {"ssh -W '[%h]:%p' -l %r jump", "ssh -W '[10.1.2.3]:2222' -l gpuops jump", ""},
      {"nc %n %p # by %u, 100%%", "nc gpu07 2222 # by ci, 100%", ""},
      {"connect %k", nullptr, "ProxyCommand: unsupported token %k"},
      {"nc %h %", nullptr, "ProxyCommand ends with a lone '%'"},
  };
  for (const Row& row : rows) {
    SCOPED_TRACE(row.command);
    std::string out;
    Status status = ExpandProxyCommand(row.command, tokens, &out);
    if (row.expanded != nullptr) {
      ASSERT_TRUE(status.ok()) << status.ToString();
      EXPECT_EQ(out, row.expanded);
    } else {
      EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
      EXPECT_EQ(status.message(), row.error);
    }
  }
}

TEST(ProxyCommandTest, RefusesHostsAndUsersAShellWouldReadAsMore) {
  // CVE-2023-6004: a host name that carries a command.
  for (const char* hostile : {"gpu1;touch /tmp/x", "$(reboot)", "`id`", "-oProxyCommand=x", "a b",
                              "gpu'1", "x|y", "gpu\n1", ""}) {
    SCOPED_TRACE(hostile);
    ProxyTokens host;
    host.host = hostile;
    host.user = "root";
    std::string out;
    Status status = ExpandProxyCommand("nc %h %p", host, &out);
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
    EXPECT_NE(status.message().find("refusing to put %h"), std::string::npos);
    ProxyTokens user;
    user.host = "gpu1";
    user.user = hostile;
    EXPECT_EQ(ExpandProxyCommand("ssh -l %r -W %h:%p jump", user, &out).kind(),
              ErrorKind::kInvalidInput);
  }
}

TEST(ProxyCommandTest, ClassifiesWhatAFailedProxySaid) {
  // What OpenSSH's ssh -W prints (captured from ssh 9.2 on Debian 12).
  const std::pair<const char*, ErrorKind> rows[] = {
      {"ssh: connect to host 127.0.100.99 port 22: Connection refused", ErrorKind::kRefused},
      {"channel 0: open failed: connect failed: Connection refused; stdio forwarding failed",
       ErrorKind::kRefused},
      {"ssh: Could not resolve hostname bastion.invalid: Name or service not known",
       ErrorKind::kDns},
      {"ssh: connect to host 10.9.9.9 port 22: Connection timed out", ErrorKind::kConnectTimeout},
      {"Host key verification failed.", ErrorKind::kHostKey},
      {"root@127.0.100.1: Permission denied (publickey).", ErrorKind::kAuth},
      {"", ErrorKind::kConnectionLost},
      {"stdio forwarding failed", ErrorKind::kConnectionLost},
  };
  for (const auto& [text, kind] : rows) {
    EXPECT_EQ(ClassifyProxyFailure(text), kind) << text;
  }
}

bool Alive(pid_t pid) { return kill(pid, 0) == 0; }

pid_t ReadPid(const std::string& path) {
  for (int i = 0; i < 200; ++i) {
    std::ifstream in(path);
    pid_t pid = 0;
    if (in >> pid && pid > 0) return pid;
    usleep(10000);
  }
  return -1;
}

TEST(ProxyCommandTest, RunsWithNoWayToRaiseADialog) {
  setenv("DISPLAY", ":0", 1);
  setenv("SSH_ASKPASS", "/usr/bin/ssh-askpass", 1);
  setenv("SSH_ASKPASS_REQUIRE", "force", 1);
  ProxyCommand proxy;
  ASSERT_TRUE(proxy
                  .Start("printf 'SSH-2.0-x %s|%s|%s\\r\\n' \"${DISPLAY-unset}\" "
                         "\"${SSH_ASKPASS-unset}\" \"$SSH_ASKPASS_REQUIRE\"; sleep 30")
                  .ok());
  unsetenv("DISPLAY");
  unsetenv("SSH_ASKPASS");
  unsetenv("SSH_ASKPASS_REQUIRE");
  ASSERT_TRUE(proxy.AwaitBanner(Clock::now() + milliseconds(10000), "gpu01").ok());
  char buf[128] = {};
  ASSERT_GT(read(proxy.fd(), buf, sizeof buf - 1), 0);
  EXPECT_EQ(std::string(buf), "SSH-2.0-x unset|unset|never\r\n");
}

TEST(ProxyCommandTest, PassesTheBannerOn) {
  ProxyCommand proxy;
  ASSERT_TRUE(proxy.Start("printf 'SSH-2.0-test\\r\\n'; sleep 30").ok());
  Status status = proxy.AwaitBanner(Clock::now() + milliseconds(10000), "gpu01");
  EXPECT_TRUE(status.ok()) << status.ToString();
  char buf[64] = {};
  EXPECT_GT(read(proxy.fd(), buf, sizeof buf - 1), 0);
  EXPECT_EQ(std::string(buf).rfind("SSH-2.0-test", 0), 0u);
}

TEST(ProxyCommandTest, ASilentProxyEndsAtTheDeadlineAndIsStopped) {
  const std::string pid_file = testing::TempDir() + "/proxy_silent.pid";
  std::remove(pid_file.c_str());
  ProxyCommand proxy;
  // The shell execs sleep's parent; the child sleep is in the same group.
  ASSERT_TRUE(proxy.Start("sh -c 'echo $$ > " + pid_file + "; sleep 60 & wait'").ok());
  Status status = proxy.AwaitBanner(Clock::now() + milliseconds(300), "gpu01");
  EXPECT_EQ(status.kind(), ErrorKind::kConnectTimeout) << status.ToString();
  EXPECT_NE(status.message().find("no SSH banner through the ProxyCommand"), std::string::npos);
  pid_t pid = ReadPid(pid_file);
  ASSERT_GT(pid, 0);
  EXPECT_TRUE(Alive(pid));
  proxy.Stop();
  EXPECT_FALSE(Alive(pid));
  std::remove(pid_file.c_str());
}

TEST(ProxyCommandTest, AProxyThatEndsFirstSaysWhy) {
  ProxyCommand proxy;
  ASSERT_TRUE(proxy
                  .Start("echo 'ssh: connect to host 10.0.0.9 port 22: Connection "
                         "refused' >&2; exit 255")
                  .ok());
  Status status = proxy.AwaitBanner(Clock::now() + milliseconds(10000), "gpu09");
  EXPECT_EQ(status.kind(), ErrorKind::kRefused) << status.ToString();
  EXPECT_EQ(status.message(),
            "gpu09: the ProxyCommand ended before the SSH banner: ssh: connect to host "
            "10.0.0.9 port 22: Connection refused");
}

}  // namespace
}  // namespace fleetreap
