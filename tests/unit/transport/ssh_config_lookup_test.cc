#include "fleetreap/transport/ssh_config_lookup.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <fstream>
#include <string>
#include <vector>

namespace fleetreap {
namespace {

class SshConfigLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-sshconfig-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    mkdir((dir_ + "/.ssh").c_str(), 0700);
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }
  SshConfigValues Look(const std::vector<std::string>& files, const std::string& host) {
    SshConfigValues values;
    Status status = LookUpSshConfig(files, host, dir_, &values);
    EXPECT_TRUE(status.ok()) << status.ToString();
    return values;
  }
  std::string dir_;
};

TEST_F(SshConfigLookupTest, HostPatternsFirstValueWinsAndEveryWordIsKept) {
  const std::string config = Write("config",
                                   "# fleet\n"
                                   "Host gpu0? !gpu09\n"
                                   "  HostKeyAlias=fleet-%h\n"
                                   "  UserKnownHostsFile ~/.ssh/fleet_hosts \"/x/with space\"\n"
                                   "Host *\n"
                                   "  HostKeyAlias ignored\n"
                                   "  GlobalKnownHostsFile /etc/fleet_hosts\n"
                                   "  UserKnownHostsFile /never\n"
                                   "  IdentityAgent ~/agent.sock\n");
  struct Case {
    const char* host;
    const char* alias;
    std::vector<std::string> user;
  };
  const Case kCases[] = {
      {"gpu01", "fleet-%h", {"~/.ssh/fleet_hosts", "/x/with space"}},
      {"GPU02", "fleet-%h", {"~/.ssh/fleet_hosts", "/x/with space"}},
      {"gpu09", "ignored", {"/never"}},
      {"gpu010", "ignored", {"/never"}},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.host);
    SshConfigValues values = Look({config}, c.host);
    EXPECT_EQ(values.host_key_alias, c.alias);
    EXPECT_EQ(values.user_known_hosts, c.user);
    EXPECT_EQ(values.global_known_hosts, std::vector<std::string>{"/etc/fleet_hosts"});
    EXPECT_EQ(values.identity_agent, "~/agent.sock");
  }
}

TEST_F(SshConfigLookupTest, TheUserFileWinsOverTheSystemFileAndMissingFilesAreSkipped) {
  const std::string user = Write("user", "Host *\n  HostKeyAlias from-user\n");
  const std::string system = Write("system", "HostKeyAlias from-system\nIdentityAgent none\n");
  SshConfigValues values = Look({dir_ + "/absent", user, system}, "gpu01");
  EXPECT_EQ(values.host_key_alias, "from-user");
  EXPECT_EQ(values.identity_agent, "none");
}

TEST_F(SshConfigLookupTest, MatchAllHostAndOriginalHostOtherCriteriaDoNotMatch) {
  const std::string config = Write("config",
                                   "Host gpu01\n  HostName 10.0.0.1\n"
                                   "Match exec \"true\"\n  HostKeyAlias from-exec\n"
                                   "Match host 10.0.0.*\n  UserKnownHostsFile /by-hostname\n"
                                   "Match originalhost gpu0*,!gpu02\n  HostKeyAlias original\n"
                                   "Match all\n  GlobalKnownHostsFile /all\n");
  SshConfigValues values = Look({config}, "gpu01");
  EXPECT_EQ(values.host_key_alias, "original");
  EXPECT_EQ(values.user_known_hosts, std::vector<std::string>{"/by-hostname"});
  EXPECT_EQ(values.global_known_hosts, std::vector<std::string>{"/all"});
  values = Look({config}, "gpu02");
  EXPECT_EQ(values.host_key_alias, "");
  EXPECT_TRUE(values.user_known_hosts.empty());
}

TEST_F(SshConfigLookupTest, IncludesAreFollowedWhereTheyStand) {
  Write(".ssh/fleet.conf", "HostKeyAlias included\n");
  Write(".ssh/other.conf", "Host *\n  UserKnownHostsFile /other\n");
  const std::string config = Write("config",
                                   "Host gpu01\n  Include fleet.conf\n"
                                   "Host gpu02\n  Include ~/.ssh/other*.conf\n");
  EXPECT_EQ(Look({config}, "gpu01").host_key_alias, "included");
  EXPECT_TRUE(Look({config}, "gpu01").user_known_hosts.empty());
  EXPECT_EQ(Look({config}, "gpu02").host_key_alias, "");
  EXPECT_EQ(Look({config}, "gpu02").user_known_hosts, std::vector<std::string>{"/other"});
}

TEST_F(SshConfigLookupTest, AnIncludeLoopIsAnError) {
  const std::string config = Write(".ssh/loop", "Include loop\n");
  SshConfigValues values;
  Status status = LookUpSshConfig({config}, "gpu01", dir_, &values);
  EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput);
  EXPECT_NE(status.message().find("Include nested too deep"), std::string::npos);
}

TEST_F(SshConfigLookupTest, ProxyJumpOrProxyCommandWhicheverComesFirst) {
  const std::string config = Write("config",
                                   "Host gpu01\n"
                                   "  ProxyJump ops@jump:2222,bastion\n"
                                   "  ProxyCommand ignored %h\n"
                                   "Host gpu02\n"
                                   "  ProxyCommand ssh -W %h:%p bastion\n"
                                   "Host gpu03\n"
                                   "  ProxyJump none\n"
                                   "Host *\n"
                                   "  ProxyJump fallback\n");
  struct Case {
    const char* host;
    const char* jump;
    const char* command;
  };
  const Case kCases[] = {
      {"gpu01", "ops@jump:2222,bastion", ""},
      {"gpu02", "", "ssh -W %h:%p bastion"},
      {"gpu03", "none", ""},
      {"gpu04", "fallback", ""},
  };
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.host);
    const SshConfigValues values = Look({config}, c.host);
    EXPECT_EQ(values.proxy_jump, c.jump);
    EXPECT_EQ(values.proxy_command, c.command);
  }
}

TEST(ExpandSshConfigPathTest, TokensTildeAndEnvironment) {
  ProxyTokens tokens;
  tokens.host = "10.0.0.1";
  tokens.original_host = "gpu01";
  tokens.port = 2222;
  tokens.user = "root";
  tokens.local_user = "ops";
  setenv("FLEETREAP_TEST_DIR", "/env", 1);
  EXPECT_EQ(ExpandSshConfigPath("~/.ssh/known_%h_%p", tokens, "/home/ops", ""),
            "/home/ops/.ssh/known_10.0.0.1_2222");
  EXPECT_EQ(ExpandSshConfigPath("%d/%u/%r/%n/%k/%%/%z", tokens, "/home/ops", ""),
            "/home/ops/ops/root/gpu01/gpu01/%/%z");
  EXPECT_EQ(ExpandSshConfigPath("/k/%k", tokens, "/h", "alias"), "/k/alias");
  EXPECT_EQ(ExpandSshConfigPath("${FLEETREAP_TEST_DIR}/agent", tokens, "/h", ""), "/env/agent");
  unsetenv("FLEETREAP_TEST_DIR");
}

}  // namespace
}  // namespace fleetreap
