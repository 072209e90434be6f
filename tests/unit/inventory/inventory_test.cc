#include "fleetreap/inventory/inventory.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "support/inventory_describe.h"

namespace fleetreap {
namespace {

struct Good {
  const char* name;
  const char* yaml;
  const char* hosts;
};

const Good kGood[] = {
    {"plain hosts under all",
     "all:\n"
     "  hosts:\n"
     "    gpu01:\n"
     "    gpu02:\n"
     "      ansible_host: 10.0.0.2\n",
     "gpu01 gpu01:22 [ungrouped] inv/lab.yaml:3\n"
     "gpu02 10.0.0.2:22 [ungrouped] inv/lab.yaml:4\n"},
    {"ranges keep padding, host:port keys",
     "all:\n"
     "  hosts:\n"
     "    gpu[08:10]:\n"
     "    login[1:2]:2222:\n",
     "gpu08 gpu08:22 [ungrouped] inv/lab.yaml:3\n"
     "gpu09 gpu09:22 [ungrouped] inv/lab.yaml:3\n"
     "gpu10 gpu10:22 [ungrouped] inv/lab.yaml:3\n"
     "login1 login1:2222 [ungrouped] inv/lab.yaml:4\n"
     "login2 login2:2222 [ungrouped] inv/lab.yaml:4\n"},
    {"a port after an Ansible range; an IPv6 literal stays whole",
     "all:\n"
     "  hosts:\n"
     "    gpu[01:02]:2222:\n"
     "    \"fe80::1\":\n",
     "gpu01 gpu01:2222 [ungrouped] inv/lab.yaml:3\n"
     "gpu02 gpu02:2222 [ungrouped] inv/lab.yaml:3\n"
     "fe80::1 fe80::1:22 [ungrouped] inv/lab.yaml:4\n"},
    {"precedence: all < parent < child < host",
     "all:\n"
     "  vars: {ansible_user: a, ansible_port: 1}\n"
     "  children:\n"
     "    gpus:\n"
     "      vars: {ansible_user: b, ansible_port: 2}\n"
     "      children:\n"
     "        rack1:\n"
     "          vars: {ansible_user: c}\n"
     "          hosts:\n"
     "            gpu01: {ansible_port: 4}\n"
     "            gpu02:\n"
     "    login:\n"
     "      hosts:\n"
     "        login1:\n",
     "gpu01 gpu01:4 user=c [gpus rack1] inv/lab.yaml:10\n"
     "gpu02 gpu02:2 user=c [gpus rack1] inv/lab.yaml:11\n"
     "login1 login1:1 user=a [login] inv/lab.yaml:14\n"},
    {"equal depth: later name wins; deeper group wins over name",
     "all:\n"
     "  children:\n"
     "    b_rack: {vars: {ansible_user: rack}, hosts: {gpu01: }}\n"
     "    a_model: {vars: {ansible_user: model}, hosts: {gpu01: }}\n"
     "    zz:\n"
     "      children:\n"
     "        deep: {vars: {ansible_port: 7}, hosts: {gpu02: }}\n"
     "    aa: {vars: {ansible_port: 8}, hosts: {gpu02: }}\n",
     "gpu01 gpu01:22 user=rack [a_model b_rack] inv/lab.yaml:3\n"
     "gpu02 gpu02:7 [aa deep zz] inv/lab.yaml:7\n"},
    {"a host in several groups is listed once, in first-seen order",
     "all:\n"
     "  children:\n"
     "    rack1: {hosts: {gpu02: , gpu01: }}\n"
     "    h100: {hosts: {gpu01: , gpu03: }}\n",
     "gpu02 gpu02:22 [rack1] inv/lab.yaml:3\n"
     "gpu01 gpu01:22 [h100 rack1] inv/lab.yaml:3\n"
     "gpu03 gpu03:22 [h100] inv/lab.yaml:4\n"},
    {"fleetreap settings, become and relative paths",
     "all:\n"
     "  vars:\n"
     "    ansible_ssh_private_key_file: keys/id_fleet\n"
     "    ansible_become: yes\n"
     "    fleetreap_expected_gpus: 8\n"
     "    fleetreap_playbook: /etc/fleetreap/vllm.yaml\n"
     "    fleetreap_protect: [dcgm-exporter, /opt/agent/bin/agent]\n"
     "    fleetreap_threshold_mib: 16\n"
     "  hosts:\n"
     "    gpu01:\n"
     "    gpu02: {fleetreap_protect: agent, become: false, ansible_become: false}\n",
     "gpu01 gpu01:22 key=inv/keys/id_fleet become gpus=8 "
     "playbook=/etc/fleetreap/vllm.yaml protect=dcgm-exporter,/opt/agent/bin/agent "
     "mib=16 [ungrouped] inv/lab.yaml:10\n"
     "gpu02 gpu02:22 key=inv/keys/id_fleet gpus=8 playbook=/etc/fleetreap/vllm.yaml "
     "protect=agent mib=16 [ungrouped] inv/lab.yaml:11\n"},
    {"plain spellings are ignored; ansible_ssh_* wins; y and F are booleans",
     "all:\n"
     "  hosts:\n"
     "    gpu01: {host: 10.1.1.1, port: 2200, user: ops, identity_file: /k, become: on}\n"
     "    gpu02: {ansible_ssh_host: x, ansible_host: y, ansible_user: u, ansible_ssh_user: v,\n"
     "            ansible_become: y}\n"
     "    gpu03: {ansible_ssh_host: ~, ansible_host: z, ansible_become: F}\n",
     "gpu01 gpu01:22 [ungrouped] inv/lab.yaml:3\n"
     "gpu02 x:22 user=v become [ungrouped] inv/lab.yaml:4\n"
     "gpu03 z:22 [ungrouped] inv/lab.yaml:6\n"},
    {"a later duplicate key wins where the first stood; a port counts where a host is new",
     "all:\n"
     "  hosts:\n"
     "    gpu01: {ansible_user: a}\n"
     "    gpu02:\n"
     "    gpu01: {ansible_port: 2}\n"
     "  children:\n"
     "    g: {hosts: {gpu02:2222: }}\n"
     "  vars: {ansible_user: b, ansible_user: c}\n",
     "gpu01 gpu01:2 user=c [ungrouped] inv/lab.yaml:3\n"
     "gpu02 gpu02:22 user=c [g] inv/lab.yaml:4\n"},
    {"ansible_group_priority orders groups of one depth before their names do",
     "all:\n"
     "  children:\n"
     "    a: {vars: {ansible_user: a, ansible_group_priority: 10}, hosts: {gpu01: }}\n"
     "    b: {vars: {ansible_user: b}, hosts: {gpu01: }}\n",
     "gpu01 gpu01:22 user=a [a b] inv/lab.yaml:3\n"},
    {"top-level groups other than all, children defined later",
     "gpus:\n"
     "  children:\n"
     "    rack1:\n"
     "rack1:\n"
     "  hosts:\n"
     "    gpu01:\n"
     "  vars:\n"
     "    ansible_user: r\n",
     "gpu01 gpu01:22 user=r [gpus rack1] inv/lab.yaml:6\n"},
    {"a group listed twice merges, the same host twice merges",
     "all:\n"
     "  children:\n"
     "    a:\n"
     "      hosts: {gpu01: {x: 1}}\n"
     "    b:\n"
     "      children:\n"
     "        a:\n"
     "          hosts: {gpu01: {y: 2}, gpu02: }\n",
     "gpu01 gpu01:22 [a b] inv/lab.yaml:4\n"
     "gpu02 gpu02:22 [a b] inv/lab.yaml:8\n"},
};

TEST(InventoryTest, LoadsGoodInventories) {
  for (const Good& row : kGood) {
    Inventory inventory;
    std::vector<std::string> warnings;
    Status s = ParseYamlInventory(row.yaml, "inv/lab.yaml", &inventory, &warnings);
    ASSERT_TRUE(s.ok()) << row.name << ": " << s.ToString();
    EXPECT_EQ(Describe(inventory), row.hosts) << row.name;
    EXPECT_EQ(inventory.path(), "inv/lab.yaml");
  }
}

TEST(InventoryTest, KeepsEveryVariableAndGroupMembership) {
  Inventory inventory;
  std::vector<std::string> warnings;
  const Good* merged = std::find_if(std::begin(kGood), std::end(kGood), [](const Good& g) {
    return std::string(g.name) == "a group listed twice merges, the same host twice merges";
  });
  ASSERT_TRUE(ParseYamlInventory(merged->yaml, "inv/lab.yaml", &inventory, &warnings).ok());
  EXPECT_EQ(inventory.hosts()[0].vars,
            (std::map<std::string, std::string>{{"x", "1"}, {"y", "2"}}));
  EXPECT_EQ(inventory.group_names(), (std::vector<std::string>{"all", "ungrouped", "a", "b"}));
  EXPECT_EQ(*inventory.GroupMembers("b"), (std::vector<size_t>{0, 1}));
  EXPECT_EQ(*inventory.GroupMembers("all"), (std::vector<size_t>{0, 1}));
  EXPECT_TRUE(inventory.GroupMembers("ungrouped")->empty());
  EXPECT_EQ(inventory.GroupMembers("nope"), nullptr);
  EXPECT_EQ(inventory.HostIndex("gpu02"), 1);
  EXPECT_EQ(inventory.HostIndex("gpu03"), -1);
}

struct Bad {
  const char* yaml;
  const char* error;
};

const Bad kBad[] = {
    {"all:\n  hosts:\n    gpu03:\n      ansible_port: 70000\n",
     "inv/lab.yaml:4:21: host \"gpu03\": ansible_port must be 1-65535, got 70000"},
    {"all:\n  hosts:\n    gpu03: {ansible_ssh_port: 0}\n",
     "inv/lab.yaml:3:31: host \"gpu03\": ansible_ssh_port must be 1-65535, got 0"},
    {"all:\n  vars:\n    ansible_port: ssh\n",
     "inv/lab.yaml:3:19: group \"all\": ansible_port must be a port number 1-65535, "
     "got \"ssh\""},
    {"all:\n  hosts:\n    gpu03:70000:\n",
     "inv/lab.yaml:3:11: host \"gpu03:70000\": ansible_port must be 1-65535, got 70000"},
    {"all:\n  hosts:\n    gpu[09:01]:\n",
     "inv/lab.yaml:3:5: host range \"gpu[09:01]\": start 09 is after end 01"},
    {"all:\n  hosts:\n    \"gpu[01:\":\n",
     "inv/lab.yaml:3:5: host range \"gpu[01:\": missing \"]\""},
    {"all:\n  hosts:\n    gpu 01:\n", "inv/lab.yaml:3:5: \"gpu 01\" is not a valid host name"},
    {"all:\n  hosts: [gpu01, gpu02]\n",
     "inv/lab.yaml:2:10: group \"all\": hosts must be a mapping of host names, got a list"},
    {"all:\n  hosts:\n    gpu01: yes\n",
     "inv/lab.yaml:3:12: host \"gpu01\": expected variables (a mapping) or nothing, got a "
     "string"},
    {"all:\n  host:\n    gpu01:\n",
     "inv/lab.yaml:2:3: group \"all\": unknown key \"host\" (expected hosts, children or "
     "vars)"},
    {"hosts:\n  gpu01:\n",
     "inv/lab.yaml:1:1: unknown top-level key \"hosts\" (an inventory starts with "
     "\"all:\" or a group name)"},
    {"all:\n  hosts:\n    gpu01:\nversion: 2\n",
     "inv/lab.yaml:4:1: unknown top-level key \"version\": expected a group (a mapping "
     "with hosts, children or vars), got a string"},
    {"all:\n  children:\n    a:\n      children:\n        b:\n          children:\n"
     "            a:\n",
     "inv/lab.yaml:7:13: group \"a\" contains itself: a -> b -> a"},
    {"all:\n  children:\n    all:\n",
     "inv/lab.yaml:3:5: group \"all\" contains itself: all -> all"},
    {"all:\n  children: [a, b]\n",
     "inv/lab.yaml:2:13: group \"all\": children must be a mapping of group names, got a "
     "list"},
    {"all:\n  vars: [a]\n", "inv/lab.yaml:2:9: group \"all\": vars must be a mapping, got a list"},
    {"all:\n  vars:\n    ansible_become: maybe\n",
     "inv/lab.yaml:3:21: group \"all\": ansible_become must be true or false, got "
     "\"maybe\""},
    {"all:\n  vars:\n    ansible_user: [a]\n",
     "inv/lab.yaml:3:19: group \"all\": ansible_user must be a string, got a list"},
    {"all:\n  vars:\n    fleetreap_expected_gpus: eight\n",
     "inv/lab.yaml:3:30: group \"all\": fleetreap_expected_gpus must be a GPU count "
     "0-1024, got \"eight\""},
    {"all:\n  vars:\n    fleetreap_threshold_mib: -1\n",
     "inv/lab.yaml:3:30: group \"all\": fleetreap_threshold_mib must be a number of MiB "
     "(0 or more), got \"-1\""},
    {"all:\n  vars:\n    fleetreap_protect: {a: 1}\n",
     "inv/lab.yaml:3:24: group \"all\": fleetreap_protect must be a list of names, got a "
     "mapping"},
    {"all:\n  vars:\n    fleetreap_expected_gpu: 8\n",
     "inv/lab.yaml:3:29: group \"all\": unknown fleetreap variable "
     "\"fleetreap_expected_gpu\" (known: fleetreap_expected_gpus, fleetreap_playbook, "
     "fleetreap_protect, fleetreap_threshold_mib)"},
    {"all:\n  hosts:\n    gpu01:\n  vars: {a: 1\n",
     "inv/lab.yaml:5:1: YAML syntax error: end of map flow not found"},
    {"all:\n  children:\n    rack1: {hosts: {gpu[01:08]: }}\n",
     "inv/lab.yaml:3:24: YAML syntax error: end of map flow not found (a host range "
     "inside { } must be quoted: \"gpu[01:08]\": {})"},
    {"all:\n  children:\n    empty:\n", "inv/lab.yaml: no hosts in the inventory"},
    {"- gpu01\n- gpu02\n", "inv/lab.yaml:1:1: expected a mapping of groups (\"all:\"), got a list"},
};

TEST(InventoryTest, RejectsBadInventoriesWithExactText) {
  for (const Bad& row : kBad) {
    Inventory inventory;
    std::vector<std::string> warnings;
    Status s = ParseYamlInventory(row.yaml, "inv/lab.yaml", &inventory, &warnings);
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidInput) << row.yaml;
    EXPECT_EQ(s.message(), row.error) << row.yaml;
  }
}

TEST(InventoryTest, WarnsWhereConflictingSettingsMeet) {
  const char* yaml =
      "all:\n"
      "  children:\n"
      "    rack1:\n"
      "      vars: {ansible_user: ops}\n"
      "      hosts:\n"
      "        gpu01: {ansible_port: 22}\n"
      "        gpu02:\n"
      "    h100:\n"
      "      vars: {ansible_user: ml}\n"
      "      hosts:\n"
      "        gpu01: {ansible_port: 2222, note: x}\n"
      "        gpu02:\n";
  Inventory inventory;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseYamlInventory(yaml, "inv/lab.yaml", &inventory, &warnings).ok());
  EXPECT_EQ(inventory.hosts()[0].port, 2222);
  EXPECT_EQ(inventory.hosts()[0].user, "ops");
  EXPECT_EQ(warnings,
            (std::vector<std::string>{
                "inv/lab.yaml:11:31: host \"gpu01\": ansible_port \"2222\" overrides "
                "\"22\" set at inv/lab.yaml:6:31",
                "inv/lab.yaml:4:28: group \"rack1\" sets ansible_user \"ops\", overriding "
                "\"ml\" from group \"h100\" at inv/lab.yaml:9:28 for hosts in both "
                "(first: \"gpu01\")"}));
}

TEST(InventoryTest, WarnsOnceAboutAnsibleVariablesItDoesNotHonour) {
  const char* yaml =
      "all:\n"
      "  vars:\n"
      "    ansible_ssh_common_args: -o ProxyJump=bastion\n"
      "    ansible_connection: ssh\n"
      "    ansible_become_user: root\n"
      "  hosts:\n"
      "    gpu01: {ansible_ssh_common_args: -o ProxyJump=b2, ansible_password: x}\n"
      "    gpu02: {ansible_connection: local, ansible_become_method: su}\n";
  Inventory inventory;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseYamlInventory(yaml, "inv/lab.yaml", &inventory, &warnings).ok());
  EXPECT_EQ(warnings,
            (std::vector<std::string>{
                "inv/lab.yaml:3:30: ansible_ssh_common_args is not used: fleetreap passes "
                "no OpenSSH options (a ProxyJump belongs in ~/.ssh/config, read with "
                "--ssh-config)",
                "inv/lab.yaml:7:73: ansible_password is not used: fleetreap logs in with "
                "keys and the SSH agent only",
                "inv/lab.yaml:8:33: ansible_connection \"local\" is not used: fleetreap "
                "always connects over SSH",
                "inv/lab.yaml:8:63: ansible_become_method \"su\" is not used: fleetreap "
                "becomes root with sudo -n"}));
}

TEST(InventoryTest, LoadsTheShippedExamples) {
  const std::string dir = std::string(FLEETREAP_SOURCE_DIR) + "/inventory/";
  struct Row {
    const char* file;
    size_t hosts;
    const char* host;       // one host to look at closely
    const char* described;  // Describe() of that host alone; @ is dir, # the source root
  };
  const Row rows[] = {
      {"fleet.yaml", 24, "gpu-b1-08",
       "gpu-b1-08 10.20.1.108:22 user=svc-rollout key=@keys/rollout_ed25519 become gpus=7 "
       "playbook=#playbooks/vllm.yaml protect=dcgm-exporter,/opt/monitoring/bin/node-agent "
       "mib=0 [gpus h200 rack_b1] @fleet.yaml:37\n"},
      {"fleet.yaml", 24, "gpu-a2-03",
       "gpu-a2-03 gpu-a2-03:2222 user=svc-rollout key=@keys/rollout_ed25519 become gpus=8 "
       "playbook=#playbooks/default.yaml protect=dcgm-exporter,/opt/monitoring/bin/node-agent "
       "[gpus h100 rack_a2] @fleet.yaml:29\n"},
      {"lab.yaml", 2, "lab-gpu2",
       "lab-gpu2 192.168.50.12:2222 user=ops gpus=2 [ungrouped] @lab.yaml:9\n"},
      {"hosts.ini", 16, "gpu-b1-08",
       "gpu-b1-08 10.20.1.108:22 user=svc-rollout become gpus=7 [gpus rack_b1] @hosts.ini:13\n"},
  };
  for (const Row& row : rows) {
    Inventory inventory;
    std::vector<std::string> warnings;
    Status s = LoadInventory(dir + row.file, &inventory, &warnings);
    ASSERT_TRUE(s.ok()) << s.ToString();
    EXPECT_TRUE(warnings.empty()) << row.file << ": " << warnings[0];
    EXPECT_EQ(inventory.hosts().size(), row.hosts) << row.file;
    int index = inventory.HostIndex(row.host);
    ASSERT_GE(index, 0) << row.host;
    Inventory one;
    one.AddHost(inventory.hosts()[index]);
    std::string expected;
    for (const char* c = row.described; *c; ++c) {
      if (*c == '@') {
        expected += dir;
      } else if (*c == '#') {
        expected += std::string(FLEETREAP_SOURCE_DIR) + "/";
      } else {
        expected += *c;
      }
    }
    std::string got = Describe(one);
    EXPECT_EQ(got, expected);
  }
}

std::string WriteTemp(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

TEST(InventoryTest, LoadPicksTheLoaderByContent) {
  struct Row {
    const char* file;
    const char* text;
    const char* first_host;
  };
  const Row rows[] = {
      {"inv_a.txt", "gpu[01:03]\nlogin1\n", "gpu01"},
      {"inv_b", "all:\n  hosts:\n    gpu07:\n", "gpu07"},
      {"inv_c.yml", "gpu05\n", ""},
  };
  for (const Row& row : rows) {
    std::string path = WriteTemp(row.file, row.text);
    Inventory inventory;
    std::vector<std::string> warnings;
    Status s = LoadInventory(path, &inventory, &warnings);
    if (*row.first_host) {
      ASSERT_TRUE(s.ok()) << s.ToString();
      EXPECT_EQ(inventory.hosts()[0].name, row.first_host);
    } else {
      EXPECT_EQ(s.message(), path + ":1:1: expected a mapping of groups (\"all:\"), got a string");
    }
  }
  Inventory inventory;
  std::vector<std::string> warnings;
  Status s = LoadInventory("/nonexistent/x.yaml", &inventory, &warnings);
  EXPECT_EQ(s.message(), "/nonexistent/x.yaml: cannot read: No such file or directory");
  s = LoadInventory(WriteTemp("inv_d", "all:\n  hosts: {a: 1\n"), &inventory, &warnings);
  EXPECT_EQ(s.kind(), ErrorKind::kInvalidInput);
  EXPECT_NE(s.message().find(":3:1: YAML syntax error"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace fleetreap
