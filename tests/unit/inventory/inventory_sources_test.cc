#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "fleetreap/inventory/inventory.h"
#include "support/inventory_describe.h"

namespace fleetreap {
namespace {

namespace fs = std::filesystem;

// Answers each command line with a canned output or error, and records it.
class FakeProgram : public InventoryProgram {
 public:
  Status Run(const std::vector<std::string>& argv, std::string* out) override {
    std::string line;
    for (const std::string& arg : argv) line += (line.empty() ? "" : " ") + arg;
    ran.push_back(line);
    auto error = errors.find(line);
    if (error != errors.end()) return Status::Error(ErrorKind::kInvalidInput, error->second);
    *out = outputs[line];
    return Status::Ok();
  }
  bool Available(const std::string& command) override { return available.count(command) > 0; }

  std::map<std::string, std::string> outputs;
  std::map<std::string, std::string> errors;
  std::set<std::string> available;
  std::vector<std::string> ran;
};

class InventorySourcesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "sources_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string Write(const std::string& rel, const std::string& text, bool executable = false) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
    if (executable) chmod(p.c_str(), 0755);
    return p.string();
  }
  Status Load(const std::vector<std::string>& sources) {
    inventory_ = Inventory();
    warnings_.clear();
    notes_.clear();
    return LoadInventorySources(sources, &program_, &inventory_, &warnings_, &notes_);
  }
  // Describe() with the temporary directory written as "D".
  std::string Described() const {
    std::string text = Describe(inventory_);
    for (size_t at; (at = text.find(dir_)) != std::string::npos;)
      text.replace(at, dir_.size(), "D");
    return text;
  }

  std::string dir_;
  FakeProgram program_;
  Inventory inventory_;
  std::vector<std::string> warnings_, notes_;
};

TEST_F(InventorySourcesTest, ADirectoryIsItsFilesInAnsiblesOrder) {
  Write("inv/b", "[gpus]\ngpu02\n");
  Write("inv/a.yaml", "all:\n  hosts:\n    gpu01:\n");
  Write("inv/sub/c.yml", "gpus:\n  hosts:\n    gpu03:\n");
  Write("inv/skipped.ini", "[gpus]\nnot-read-ini\n");
  Write("inv/notes.md", "nothing here\n");
  Write("inv/old.orig", "[gpus]\nnot-read-orig\n");
  Write("inv/.hidden", "[gpus]\nnot-read-hidden\n");
  Write("inv/group_vars/gpus.yml", "ansible_user: ops\n");
  Write("inv/sub/group_vars/gpus.yml", "ansible_user: not-read\n");  // only the source's own
  Status s = Load({dir_ + "/inv"});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(Described(),
            "gpu01 gpu01:22 [ungrouped] D/inv/a.yaml:3\n"
            "gpu02 gpu02:22 user=ops [gpus] D/inv/b:2\n"
            "gpu03 gpu03:22 user=ops [gpus] D/inv/sub/c.yml:3\n");
  EXPECT_EQ(inventory_.path(), dir_ + "/inv");
}

TEST_F(InventorySourcesTest, AHostListIsItsHostsUngrouped) {
  ASSERT_TRUE(Load({"gpu01,gpu02:2222, gpu01 ,[fe80::1]:22,"}).ok());
  EXPECT_EQ(
      Described(),
      "gpu01 gpu01:22 [ungrouped] host list \"gpu01,gpu02:2222, gpu01 ,[fe80::1]:22,\"\n"
      "gpu02 gpu02:2222 [ungrouped] host list \"gpu01,gpu02:2222, gpu01 ,[fe80::1]:22,\"\n"
      "fe80::1 fe80::1:22 [ungrouped] host list \"gpu01,gpu02:2222, gpu01 ,[fe80::1]:22,\"\n");
  EXPECT_EQ(Load({"gpu[01:08],"}).message(),
            "host list \"gpu[01:08],\": \"gpu[01:08]\" is not a host name (Ansible's host list "
            "does not expand ranges; use --nodes 'gpu[01-08]')");
}

TEST_F(InventorySourcesTest, SeveralSourcesMergeInOrder) {
  const std::string a = Write("a/hosts.yaml",
                              "gpus:\n  hosts:\n    gpu01: {ansible_port: 2201}\n"
                              "    gpu02:\n  vars: {ansible_user: a}\n");
  const std::string b = Write("b/hosts", "[gpus]\ngpu01 ansible_port=2202\ngpu03\n");
  Write("a/group_vars/gpus.yml", "ansible_become: true\n");
  Write("b/group_vars/gpus.yml", "ansible_user: from_b_group_vars\n");
  ASSERT_TRUE(Load({a, b, "gpu04,"}).ok());
  EXPECT_EQ(Described(),
            "gpu01 gpu01:2202 user=from_b_group_vars become [gpus] D/a/hosts.yaml:3\n"
            "gpu02 gpu02:22 user=from_b_group_vars become [gpus] D/a/hosts.yaml:4\n"
            "gpu03 gpu03:22 user=from_b_group_vars become [gpus] D/b/hosts:3\n"
            "gpu04 gpu04:22 [ungrouped] host list \"gpu04,\"\n");
  EXPECT_EQ(inventory_.path(), a + ", " + b + ", gpu04,");
}

constexpr char kListJson[] = R"({
  "_meta": {"hostvars": {"gpu01": {"ansible_host": "10.0.0.1", "ansible_port": 2222},
                         "gpu02": {"ansible_user": "ops"}}},
  "all": {"children": ["ungrouped", "gpus"]},
  "gpus": {"hosts": ["gpu01", "gpu02"], "vars": {"ansible_become": true}},
  "ungrouped": {"hosts": ["login1"]}
})";

TEST_F(InventorySourcesTest, AnInventoryScriptIsRunWithList) {
  const std::string script = Write("dyn.py", "#!/usr/bin/python3\n", true);
  program_.outputs[script + " --list"] = kListJson;
  Status s = Load({script});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(program_.ran, std::vector<std::string>{script + " --list"});
  EXPECT_EQ(Described(),
            "gpu01 10.0.0.1:2222 become [gpus] D/dyn.py --list:5\n"
            "gpu02 gpu02:22 user=ops become [gpus] D/dyn.py --list:5\n"
            "login1 login1:22 [ungrouped] D/dyn.py --list:6\n");
}

// Run as root, a script someone else could have written is refused.
TEST_F(InventorySourcesTest, AScriptOthersCanWriteIsNotRun) {
  const std::string script = Write("dyn.py", "#!/usr/bin/python3\n", true);
  chmod(script.c_str(), 0777);
  Status s = Load({script});
  EXPECT_EQ(s.message(), script +
                             ": an inventory script not run: its file is writable by its "
                             "group or by others");
  chmod(script.c_str(), 0755);
  chmod(dir_.c_str(), 0777);
  s = Load({script});
  EXPECT_EQ(s.message(), script + ": an inventory script not run: its folder is world-writable");
  chmod(dir_.c_str(), 01777);  // sticky, as /tmp: others cannot replace the file
  program_.outputs[script + " --list"] = kListJson;
  EXPECT_TRUE(Load({script}).ok());
  EXPECT_TRUE(program_.ran.size() == 1u);
}

TEST_F(InventorySourcesTest, AScriptWithoutMetaIsAskedForEachHost) {
  const std::string script = Write("dyn.sh", "#!/bin/sh\n", true);
  program_.outputs[script + " --list"] =
      R"({"gpus": ["gpu01", "gpu02"], "login1": {"ansible_port": 2200}})";
  program_.outputs[script + " --host gpu01"] = R"({"ansible_user": "u1"})";
  program_.outputs[script + " --host gpu02"] = "\n";
  program_.outputs[script + " --host login1"] = "{}";
  Status s = Load({script});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(program_.ran,
            (std::vector<std::string>{script + " --list", script + " --host gpu01",
                                      script + " --host gpu02", script + " --host login1"}));
  EXPECT_EQ(Described(),
            "gpu01 gpu01:22 user=u1 [gpus] D/dyn.sh --list:1\n"
            "gpu02 gpu02:22 [gpus] D/dyn.sh --list:1\n"
            "login1 login1:2200 [login1] D/dyn.sh --list\n");
}

TEST_F(InventorySourcesTest, AFailingScriptIsReportedWithItsError) {
  const std::string script = Write("dyn.sh", "#!/bin/sh\necho '{'\n", true);
  program_.errors[script + " --list"] = script + " --list: exit 1: \"boom\"";
  EXPECT_EQ(Load({script}).message(), script + " --list: exit 1: \"boom\"");
  program_.errors.clear();
  program_.outputs[script + " --list"] = "[1, 2]";
  EXPECT_EQ(Load({script}).message(),
            dir_ + "/dyn.sh --list: expected a JSON object of groups, got a list");
  program_.outputs[script + " --list"] = R"({"gpus": {"hosts": "gpu01"}})";
  EXPECT_EQ(Load({script}).message(),
            dir_ +
                "/dyn.sh --list:1:10: group \"gpus\": hosts must be a list of host names, "
                "got a string");
}

TEST_F(InventorySourcesTest, AnExecutableIniFileFallsBackAsInAnsible) {
  // An executable without "#!" is never run (Ansible's exec of it fails).
  const std::string ini = Write("hosts", "[gpus]\ngpu01\n", true);
  ASSERT_TRUE(Load({ini}).ok());
  EXPECT_TRUE(program_.ran.empty());
  // One with "#!" that fails as a script is read as INI, with a warning.
  const std::string odd = Write("odd", "#!/bin/false\n[gpus]\ngpu01\n", true);
  program_.errors[odd + " --list"] = odd + " --list: exit 1";
  ASSERT_TRUE(Load({odd}).ok());
  EXPECT_EQ(warnings_, std::vector<std::string>{odd + ": not read as an inventory script (" + odd +
                                                " --list: exit 1); read as a static inventory, "
                                                "as Ansible does"});
}

TEST_F(InventorySourcesTest, TheJsonOfAnsibleInventoryListIsRead) {
  const std::string list = Write("list.json", kListJson);
  Status s = Load({list});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(program_.ran.empty());
  EXPECT_EQ(Described(),
            "gpu01 10.0.0.1:2222 become [gpus] D/list.json:5\n"
            "gpu02 gpu02:22 user=ops become [gpus] D/list.json:5\n"
            "login1 login1:22 [ungrouped] D/list.json:6\n");
}

TEST_F(InventorySourcesTest, APluginFileGoesThroughAnsibleInventory) {
  const std::string plugin = Write("aws_ec2.yml", "plugin: amazon.aws.aws_ec2\nregions: [x]\n");
  EXPECT_EQ(Load({plugin}).message(),
            plugin +
                ":1:1: an inventory plugin's configuration (plugin: amazon.aws.aws_ec2), which "
                "fleetreap reads through ansible-inventory, not installed here: install "
                "ansible-core (apt install ansible-core), or give fleetreap what "
                "`ansible-inventory -i " +
                plugin + " --list` prints elsewhere");
  program_.available.insert("ansible-inventory");
  program_.outputs["ansible-inventory -i " + plugin + " --list"] = kListJson;
  ASSERT_TRUE(Load({plugin}).ok());
  EXPECT_EQ(inventory_.hosts().size(), 3u);
  EXPECT_EQ(inventory_.hosts()[0].source, "ansible-inventory -i " + plugin + " --list:5");
}

TEST_F(InventorySourcesTest, AVaultFileIsSkippedUnlessAHostNeedsIt) {
  const std::string inv = Write("inv.yml",
                                "all:\n  hosts:\n    gpu01:\n    gpu02:\n"
                                "      ansible_user: \"{{ vault_user }}\"\n");
  Write("group_vars/all/vault.yml", "$ANSIBLE_VAULT;1.1;AES256\n6162\n");
  Write("group_vars/all/vars.yml", "ansible_become: true\n");
  ASSERT_TRUE(Load({inv}).ok());
  EXPECT_EQ(notes_,
            std::vector<std::string>{
                dir_ + "/group_vars/all/vault.yml: an Ansible Vault file, skipped (fleetreap "
                       "cannot decrypt it and needs it only for a setting it cannot find "
                       "elsewhere)"});
  EXPECT_EQ(inventory_.hosts()[0].problem, "");
  EXPECT_TRUE(inventory_.hosts()[0].become);
  EXPECT_EQ(inventory_.hosts()[1].problem,
            inv +
                ":5:21: host \"gpu02\": ansible_user \"{{ vault_user }}\" is a Jinja template, "
                "which fleetreap does not evaluate (write the value itself); its variables may "
                "be in the Ansible Vault file " +
                dir_ + "/group_vars/all/vault.yml, which fleetreap cannot decrypt");
}

TEST_F(InventorySourcesTest, AnInlineVaultValueRefusesTheHostThatUsesIt) {
  const std::string inv = Write("inv.yml",
                                "all:\n  hosts:\n    gpu01:\n      ansible_port: !vault |\n"
                                "        $ANSIBLE_VAULT;1.1;AES256\n        6162\n"
                                "      ansible_become_password: !vault |\n"
                                "        $ANSIBLE_VAULT;1.1;AES256\n        6162\n    gpu02:\n");
  Status s = Load({inv});
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(inventory_.hosts()[0].problem,
            inv +
                ":4:21: host \"gpu01\": ansible_port is encrypted with Ansible Vault (!vault), "
                "which fleetreap cannot decrypt (write the value itself)");
  EXPECT_EQ(inventory_.hosts()[1].problem, "");
}

TEST_F(InventorySourcesTest, AnAnsibleNameCloseToAKnownOneIsWarnedAbout) {
  const std::string yaml =
      Write("inv.yml",
            "all:\n  hosts:\n    gpu01:\n      ansible_hots: 10.0.0.1\n"
            "      ansible_become_user: root\n      ansible_custom_thing: 1\n");
  const std::string ini =
      Write("hosts", "[gpus]\ngpu02 ansible_prot=22\n[gpus:vars]\nansbile_user=x\n");
  ASSERT_TRUE(Load({yaml, ini}).ok());
  EXPECT_EQ(warnings_,
            (std::vector<std::string>{
                yaml + ":4:21: host \"gpu01\": ansible_hots is not a variable Ansible knows; did "
                       "you mean ansible_host?",
                ini + ":2: host \"gpu02\": ansible_prot is not a variable Ansible knows; did you "
                      "mean ansible_port?"}));
}

TEST_F(InventorySourcesTest, BadSourcesAreRefusedNamingThem) {
  EXPECT_EQ(Load({dir_ + "/missing.yaml"}).message(),
            dir_ + "/missing.yaml: cannot read: No such file or directory");
  EXPECT_EQ(Load({""}).message(), "--hosts: empty inventory source");
  Write("d/bad", "[gpus\n");
  EXPECT_EQ(Load({dir_ + "/d"}).message(), dir_ + "/d/bad:1: host range \"[gpus\": missing \"]\"");
}

}  // namespace
}  // namespace fleetreap
