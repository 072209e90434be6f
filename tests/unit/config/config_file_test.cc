#include "fleetreap/config/config_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace fleetreap {
namespace {

namespace fs = std::filesystem;

std::string Describe(const std::vector<Setting>& settings) {
  std::string out;
  for (const Setting& s : settings) {
    out += s.key + "=";
    for (size_t i = 0; i < s.values.size(); ++i) out += (i ? "|" : "") + s.values[i];
    out += " @" + s.source + "\n";
  }
  return out;
}

TEST(ConfigFileTest, ReadsKnownKeysWithTheirLines) {
  std::vector<Setting> settings;
  Status s = ParseConfigYaml(
      "# defaults for the rollout job\n"
      "known_hosts: keys/known_hosts\n"
      "forks: 16\n"
      "connect-timeout: 5s\n"
      "hosts: [inv/a.yaml, \"gpu01,gpu02,\", slurm:gpu]\n"
      "become: yes\n"
      "identity: ~/.ssh/fleet\n"
      "protect:\n  - my-daemon\n",
      "/etc/fleetreap/config.yaml", &settings);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(
      Describe(settings),
      "known-hosts=/etc/fleetreap/keys/known_hosts @/etc/fleetreap/config.yaml:2:1\n"
      "forks=16 @/etc/fleetreap/config.yaml:3:1\n"
      "connect-timeout=5s @/etc/fleetreap/config.yaml:4:1\n"
      "hosts=/etc/fleetreap/inv/a.yaml|gpu01,gpu02,|slurm:gpu @/etc/fleetreap/config.yaml:5:1\n"
      "become=true @/etc/fleetreap/config.yaml:6:1\n"
      "identity=~/.ssh/fleet @/etc/fleetreap/config.yaml:7:1\n"
      "protect=my-daemon @/etc/fleetreap/config.yaml:8:1\n");
}

TEST(ConfigFileTest, BadFilesAreRefusedNamingFileAndLine) {
  struct Row {
    const char* text;
    const char* error;
  };
  const Row rows[] = {
      {"forks: 8\nforcks: 16\n", "c.yaml:2:1: unknown setting \"forcks\" (did you mean forks?)"},
      {"inventory: x\n",
       "c.yaml:1:1: unknown setting \"inventory\" (known: hosts, forks, connect-timeout, "
       "command-timeout, host-timeout, deadline, retries, user, identity, known-hosts, "
       "host-key-policy, no-agent, ssh-config, ssh-config-file, become, playbook, protect, "
       "log-dir, color)"},
      {"forks: [1, 2]\n", "c.yaml:1:8: forks: expected a single value"},
      {"become: maybe\n", "c.yaml:1:1: become: expected true or false, got \"maybe\""},
      {"- forks\n", "c.yaml:1:1: expected a mapping of settings (forks: 16, ...)"},
      {"forks: {\n", "c.yaml:2:1: YAML syntax error: end of map flow not found"},
  };
  for (const Row& row : rows) {
    std::vector<Setting> settings;
    Status s = ParseConfigYaml(row.text, "c.yaml", &settings);
    EXPECT_EQ(s.kind(), ErrorKind::kUsage) << row.text;
    EXPECT_EQ(s.message(), row.error) << row.text;
  }
}

TEST(ConfigFileTest, ReadsAnsibleCfgDefaults) {
  std::vector<Setting> settings;
  Status s = ParseAnsibleCfg(
      "[defaults]\n"
      "inventory = hosts.yml, /srv/inv ; the fleet\n"
      "REMOTE_USER: svc\n"
      "private_key_file = keys/id\n"
      "forks = 32\n"
      "host_key_checking = False\n"
      "stdout_callback = yaml\n"
      "[ssh_connection]\n"
      "pipelining = True\n",
      "/proj/ansible.cfg", &settings);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Describe(settings),
            "hosts=/proj/hosts.yml|/srv/inv @/proj/ansible.cfg:2 (inventory)\n"
            "user=svc @/proj/ansible.cfg:3 (remote_user)\n"
            "identity=/proj/keys/id @/proj/ansible.cfg:4 (private_key_file)\n"
            "forks=32 @/proj/ansible.cfg:5 (forks)\n"
            "host-key-policy=accept-new @/proj/ansible.cfg:6 (host_key_checking)\n");
  settings.clear();
  EXPECT_EQ(ParseAnsibleCfg("forks = 3\n", "a.cfg", &settings).message(),
            "a.cfg:1: a setting before any [section] (configparser refuses it)");
  EXPECT_EQ(ParseAnsibleCfg("[defaults]\nforks = 3\nforks = 4\n", "a.cfg", &settings).message(),
            "a.cfg:3: option \"forks\" in section \"defaults\" already exists (configparser "
            "refuses it, and so does Ansible)");
}

class LoadDefaultsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "config_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_ + "/home");
    fs::create_directories(dir_ + "/cwd");
    chmod((dir_ + "/cwd").c_str(), 0755);
    places_.env = {{"HOME", dir_ + "/home"}};
    places_.cwd = dir_ + "/cwd";
    places_.system_file = dir_ + "/etc/fleetreap/config.yaml";
    places_.system_ansible_cfg = dir_ + "/etc/ansible/ansible.cfg";
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  std::string Load() {
    std::vector<Setting> settings;
    std::vector<std::string> notes;
    Status s = LoadDefaults(places_, &settings, &notes);
    std::string text = s.ok() ? Describe(settings) : "error: " + s.message();
    for (const std::string& note : notes) text += "note: " + note + "\n";
    for (size_t at; (at = text.find(dir_)) != std::string::npos;)
      text.replace(at, dir_.size(), "D");
    return text;
  }
  std::string dir_;
  ConfigPlaces places_;
};

TEST_F(LoadDefaultsTest, EveryLayerInPrecedenceOrder) {
  EXPECT_EQ(Load(), "");
  Write("etc/fleetreap/config.yaml", "forks: 4\nretries: 1\n");
  Write("home/.config/fleetreap/config.yaml", "forks: 8\n");
  Write("cwd/ansible.cfg", "[defaults]\nforks = 99\ninventory = inv.yml\n");
  Write("home/.ansible.cfg", "[defaults]\nremote_user = not-read\n");
  places_.env["FLEETREAP_FORKS"] = "16";
  places_.env["FLEETREAP_BECOME"] = "1";
  places_.env["FLEETREAP_ARGS"] = "--limit x";  // the contrib scripts' own
  places_.env["ANSIBLE_INVENTORY"] = "a.yml,b.yml";
  EXPECT_EQ(Load(),
            "forks=16 @FLEETREAP_FORKS\n"
            "become=true @FLEETREAP_BECOME\n"
            "forks=8 @D/home/.config/fleetreap/config.yaml:1:1\n"
            "forks=4 @D/etc/fleetreap/config.yaml:1:1\n"
            "retries=1 @D/etc/fleetreap/config.yaml:2:1\n"
            "hosts=a.yml|b.yml @ANSIBLE_INVENTORY\n"
            "forks=99 @D/cwd/ansible.cfg:2 (forks)\n"
            "hosts=D/cwd/inv.yml @D/cwd/ansible.cfg:3 (inventory)\n");
}

TEST_F(LoadDefaultsTest, AnsibleCfgIsFoundWhereAnsibleLooks) {
  Write("etc/ansible/ansible.cfg", "[defaults]\nremote_user = etc\n");
  EXPECT_EQ(Load(), "user=etc @D/etc/ansible/ansible.cfg:2 (remote_user)\n");
  Write("home/.ansible.cfg", "[defaults]\nremote_user = home\n");
  EXPECT_EQ(Load(), "user=home @D/home/.ansible.cfg:2 (remote_user)\n");
  Write("cwd/ansible.cfg", "[defaults]\nremote_user = cwd\n");
  EXPECT_EQ(Load(), "user=cwd @D/cwd/ansible.cfg:2 (remote_user)\n");
  Write("elsewhere/ansible.cfg", "[defaults]\nremote_user = env\n");
  places_.env["ANSIBLE_CONFIG"] = dir_ + "/elsewhere";
  EXPECT_EQ(Load(), "user=env @D/elsewhere/ansible.cfg:2 (remote_user)\n");
  places_.env.erase("ANSIBLE_CONFIG");
  chmod((dir_ + "/cwd").c_str(), 0777);
  EXPECT_EQ(Load(),
            "user=home @D/home/.ansible.cfg:2 (remote_user)\n"
            "note: D/cwd/ansible.cfg: not read: the directory is world-writable (Ansible "
            "ignores it too)\n");
}

// It may name inventory scripts: one another user owns is not read either.
TEST_F(LoadDefaultsTest, AnAnsibleCfgAnotherUserOwnsIsNotRead) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file away";
  Write("home/.ansible.cfg", "[defaults]\nremote_user = home\n");
  Write("cwd/ansible.cfg", "[defaults]\nremote_user = cwd\n");
  ASSERT_EQ(chown((dir_ + "/cwd/ansible.cfg").c_str(), 4321, 4321), 0);
  EXPECT_EQ(Load(),
            "user=home @D/home/.ansible.cfg:2 (remote_user)\n"
            "note: D/cwd/ansible.cfg: not read: it belongs to uid 4321, neither you nor root\n");
}

TEST_F(LoadDefaultsTest, BadDefaultsAreErrors) {
  places_.env["FLEETREAP_BECOME"] = "perhaps";
  EXPECT_EQ(Load(), "error: FLEETREAP_BECOME: expected true or false, got \"perhaps\"");
  places_.env.erase("FLEETREAP_BECOME");
  Write("home/.config/fleetreap/config.yaml", "colour: never\n");
  EXPECT_EQ(Load(),
            "error: D/home/.config/fleetreap/config.yaml:1:1: unknown setting \"colour\" (did "
            "you mean color?)");
}

}  // namespace
}  // namespace fleetreap
