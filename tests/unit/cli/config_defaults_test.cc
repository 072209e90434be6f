#include "fleetreap/cli/config_defaults.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

CliResult Parse(std::vector<const char*> args, const std::vector<Setting>& defaults) {
  args.insert(args.begin(), "fleetreap");
  return ParseCommandLineWithDefaults(static_cast<int>(args.size()), args.data(), defaults);
}

TEST(ConfigDefaultsTest, TheFlagWinsOverEveryDefault) {
  const std::vector<Setting> defaults = {
      {"forks", {"16"}, "FLEETREAP_FORKS"},
      {"forks", {"8"}, "/etc/fleetreap/config.yaml:1:1"},
      {"hosts", {"inv/a.yaml", "inv/b.ini"}, "ansible.cfg:2 (inventory)"},
      {"known-hosts", {"/k"}, "/etc/fleetreap/config.yaml:2:1"},
      {"become", {"true"}, "FLEETREAP_BECOME"},
  };
  CliResult r = Parse({"--known-hosts", "/mine"}, defaults);
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_EQ(r.options.forks, 16);
  EXPECT_EQ(r.options.hosts, (std::vector<std::string>{"inv/a.yaml", "inv/b.ini"}));
  EXPECT_EQ(r.options.known_hosts, "/mine");
  EXPECT_TRUE(r.options.become);
  r = Parse({"-f", "2", "-i", "x.yaml"}, defaults);
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_EQ(r.options.forks, 2);
  EXPECT_EQ(r.options.hosts, std::vector<std::string>{"x.yaml"});
  r = Parse({"--local"}, defaults);
  ASSERT_EQ(r.action, CliAction::kRun) << r.error;
  EXPECT_TRUE(r.options.hosts.empty());
}

TEST(ConfigDefaultsTest, ABadDefaultNamesWhereItCameFrom) {
  CliResult r = Parse({"-i", "x"}, {{"forks", {"0"}, "FLEETREAP_FORKS"}});
  EXPECT_EQ(r.action, CliAction::kUsageError);
  EXPECT_EQ(r.error, "--forks: must be 1 to 100000, got 0 (from FLEETREAP_FORKS)");
  r = Parse({"-i", "x"}, {{"connect-timeout", {"10sec"}, "c.yaml:3:1"}});
  EXPECT_EQ(r.error,
            "--connect-timeout: invalid duration \"10sec\" (use e.g. 10s, 500ms, 2m) (from "
            "c.yaml:3:1)");
}

TEST(ConfigDefaultsTest, ShowConfigSaysWhereEachSettingCameFrom) {
  const std::vector<Setting> defaults = {{"forks", {"16"}, "FLEETREAP_FORKS"},
                                         {"hosts", {"a.yml", "b.yml"}, "ANSIBLE_INVENTORY"}};
  std::vector<const char*> args = {"fleetreap", "--show-config", "--user", "ops", "--become"};
  CliResult r = ParseCommandLineWithDefaults(static_cast<int>(args.size()), args.data(), defaults);
  EXPECT_EQ(r.action, CliAction::kShowConfig);
  const std::string text = FormatShowConfig(static_cast<int>(args.size()), args.data(), defaults);
  EXPECT_NE(text.find("SETTING          VALUE"), std::string::npos) << text;
  EXPECT_NE(text.find("\nhosts            a.yml, b.yml"), std::string::npos) << text;
  EXPECT_NE(text.find("ANSIBLE_INVENTORY\n"), std::string::npos) << text;
  EXPECT_NE(text.find("\nforks            16"), std::string::npos) << text;
  EXPECT_NE(text.find("\nuser             ops"), std::string::npos) << text;
  EXPECT_NE(text.find("\nbecome           true"), std::string::npos) << text;
  EXPECT_NE(text.find("\nconnect-timeout  10s"), std::string::npos) << text;
}

}  // namespace
}  // namespace fleetreap
