#include "fleetreap/inventory/host_selection.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "fleetreap/inventory/host_pattern.h"
#include "fleetreap/inventory/inventory.h"

namespace fleetreap {
namespace {

// 16 GPU hosts in two racks and two models, plus a login node.
const char kFleet[] = R"(all:
  children:
    gpus:
      children:
        rack1:
          hosts:
            gpu[01:08]:
        rack2:
          hosts:
            gpu[09:16]:
    h100:
      hosts:
        gpu[01:04]:
        gpu[09:12]:
    h200:
      hosts:
        "gpu[05:08]": {}
        "gpu[13:16]": {}
    login:
      hosts:
        login1: {ansible_host: 10.0.0.1, ansible_user: ops}
  hosts:
    spare7:
)";

class HostSelectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::vector<std::string> warnings;
    Status s = ParseYamlInventory(kFleet, "inv/fleet.yaml", &inventory_, &warnings);
    ASSERT_TRUE(s.ok()) << s.message();
  }
  // The folded selection, or the error message.
  std::string Select(const std::string& limit) {
    std::vector<Host> hosts;
    Status s = SelectHosts(inventory_, limit, &hosts);
    if (!s.ok()) return (s.kind() == ErrorKind::kUsage ? "" : "wrong kind: ") + s.message();
    std::string order;
    std::vector<std::string> names;
    for (const Host& h : hosts) names.push_back(h.name);
    return FoldHostNames(names);
  }
  Inventory inventory_;
};

TEST_F(HostSelectionTest, SelectsWithAnsiblePatterns) {
  struct Row {
    const char* limit;
    const char* selected;
  };
  const Row rows[] = {
      {"", "gpu[01-16],login1,spare7"},
      {"all", "gpu[01-16],login1,spare7"},
      {"*", "gpu[01-16],login1,spare7"},
      {"gpu07", "gpu07"},
      {"rack2", "gpu[09-16]"},
      {"gpus", "gpu[01-16]"},
      {"ungrouped", "spare7"},
      {"rack1,login1", "gpu[01-08],login1"},
      {"rack1:login1", "gpu[01-08],login1"},
      {"rack1:&h100", "gpu[01-04]"},
      {"gpus:!h200", "gpu[01-04,09-12]"},
      {"!h200", "gpu[01-04,09-12],login1,spare7"},
      {"&h200", "gpu[05-08,13-16]"},
      {"gpu*:!gpu07:&rack1", "gpu[01-06,08]"},
      {"!gpu07:gpu*:&rack1", "gpu[01-06,08]"},
      {"gpu[01:03]", "gpu[01-03]"},
      {"gpu[01-03,10]", "gpu[01-03,10]"},
      {"rack[1:2]:!gpu[02-15]", "gpu[01,16]"},
      {"gpu0?", "gpu[01-09]"},
      {"h*:!gpu01", "gpu[02-16]"},
      {"~gpu1[0-2]", "gpu[10-12]"},
      {"~rack", "gpu[01-16]"},
      {"~.*7", "gpu07,spare7"},
      {" rack1 , &h200 ", "gpu[05-08]"},
      {"login1,login1,gpu01", "gpu01,login1"},
      {"rack1[0]", "gpu01"},
      {"rack1[-1]", "gpu08"},
      {"rack2[1:3]", "gpu[10-12]"},
      {"rack2[6:]", "gpu[15-16]"},
      {"gpus[8]", "gpu09"},
      {"h200[4]", "gpu13"},
      {"gpus[0],h200[0]", "gpu[01,05]"},
      {"gpu0[1-3]", "gpu[01-03]"},
      {"~gpu(0[1-2]|16)$", "gpu[01-02,16]"},
  };
  for (const Row& row : rows) {
    EXPECT_EQ(Select(row.limit), row.selected) << row.limit;
  }
}

TEST_F(HostSelectionTest, SelectionIsInInventoryOrder) {
  std::vector<Host> hosts;
  ASSERT_TRUE(SelectHosts(inventory_, "spare7,login1,gpu02,gpu01", &hosts).ok());
  ASSERT_EQ(hosts.size(), 4u);
  EXPECT_EQ(hosts[0].name, "gpu01");
  EXPECT_EQ(hosts[1].name, "gpu02");
  EXPECT_EQ(hosts[2].name, "login1");
  EXPECT_EQ(hosts[3].name, "spare7");
  EXPECT_EQ(hosts[2].address, "10.0.0.1");
}

TEST_F(HostSelectionTest, RejectsLimitsThatNameNothing) {
  struct Row {
    const char* limit;
    const char* error;
  };
  const Row rows[] = {
      {"gpu7O", "--limit \"gpu7O\": matches no host or group in inv/fleet.yaml"},
      {"gpus:!gpu7O", "--limit \"!gpu7O\": matches no host or group in inv/fleet.yaml"},
      {"gpus:&rack9", "--limit \"&rack9\": matches no host or group in inv/fleet.yaml"},
      {"logn1",
       "--limit \"logn1\": matches no host or group in inv/fleet.yaml (did you mean login1?)"},
      {"gpu3", "--limit \"gpu3\": matches no host or group in inv/fleet.yaml"},  // gpu03, gpu13
      {"gpu[14:20]", "--limit \"gpu[14:20]\": no host or group gpu[17-20] in inv/fleet.yaml"},
      {"gpu[09:01]", "--limit \"gpu[09:01]\": host range \"gpu[09:01]\": start 09 is after end 01"},
      {"db*", "--limit \"db*\": matches no host or group in inv/fleet.yaml"},
      {"~db", "--limit \"~db\": matches no host or group in inv/fleet.yaml"},
      {"~(", "--limit \"~(\": bad regular expression: "},
      {"rack1:&rack2", "--limit \"rack1:&rack2\": selects no hosts"},
      {"gpus:!gpus", "--limit \"gpus:!gpus\": selects no hosts"},
      {"rack1:!", "--limit \"!\": operator without a pattern"},
      {"rack1[8]", "--limit \"rack1[8]\": Ansible finds no host at that position of \"rack1\""},
      {"rack1[9:]", "--limit \"rack1[9:]\": Ansible finds no host at that position of \"rack1\""},
      {"rack1:login1,spare7",
       "--limit \"rack1:login1\": matches no host or group in inv/fleet.yaml (with a \",\" in "
       "the pattern Ansible does not split at \":\"; use one of them)"},
      {"gpu07:22",
       "--limit \"gpu07:22\": matches no host or group in inv/fleet.yaml (Ansible reads "
       "\"NAME:PORT\" as one name)"},
      {"~(?P<x>gpu)",
       "--limit \"~(?P<x>gpu)\": \"(?P\" in a regular expression is Python syntax that "
       "fleetreap cannot match the way Ansible does"},
      {"@/nonexistent/failed.txt",
       "--limit \"@/nonexistent/failed.txt\": cannot read /nonexistent/failed.txt: No such "
       "file or directory"},
  };
  for (const Row& row : rows) {
    std::string got = Select(row.limit);
    if (std::string(row.limit) == "~(") {
      EXPECT_EQ(got.rfind(row.error, 0), 0u) << got;  // libstdc++'s own wording follows
    } else {
      EXPECT_EQ(got, row.error) << row.limit;
    }
  }
}

TEST_F(HostSelectionTest, ReadsNamesFromAFile) {
  const std::string path = ::testing::TempDir() + "failed-hosts.txt";
  std::ofstream(path) << "# failed in the last run\ngpu03\n\ngpu[11-12]  \nlogin1\n";
  EXPECT_EQ(Select("@" + path), "gpu[03,11-12],login1");
  EXPECT_EQ(Select("rack1:!@" + path), "gpu[01-02,04-08]");
  EXPECT_EQ(Select("rack2:&@" + path), "gpu[11-12]");
  std::ofstream(path) << "gpu03\ngpu99\n";
  EXPECT_EQ(
      Select("@" + path),
      "--limit \"@" + path +
          "\" line 2: \"gpu99\": matches no host or group in inv/fleet.yaml (did you mean gpu09?)");
}

// The CI re-run step's `--limit @failed-hosts.txt` after a run where nothing
// failed: the file is empty, it selects nothing, and that is no error.
TEST_F(HostSelectionTest, AnEmptyFileSelectsNothingAndSaysSo) {
  const std::string path = ::testing::TempDir() + "no-failed-hosts.txt";
  for (const char* text : {"", "# nothing failed\n\n   \n"}) {
    std::ofstream(path) << text;
    std::vector<Host> hosts;
    std::string note = "stale";
    Status s = SelectHosts(inventory_, "@" + path, &hosts, &note);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(hosts.empty());
    EXPECT_EQ(note, "--limit \"@" + path + "\": " + path + " is empty: no hosts selected");
    s = SelectHosts(inventory_, "rack2:&@" + path, &hosts, &note);
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_TRUE(hosts.empty());
    EXPECT_EQ(note, "--limit \"rack2:&@" + path + "\": " + path + " is empty: no hosts selected");
    EXPECT_TRUE(SelectHosts(inventory_, "@" + path, &hosts).ok());  // the note is optional
    // Where other terms select hosts, the empty file changes nothing, quietly.
    ASSERT_TRUE(SelectHosts(inventory_, "rack1:!@" + path, &hosts, &note).ok());
    EXPECT_EQ(hosts.size(), 8u);
    EXPECT_EQ(note, "");
    EXPECT_EQ(Select("h100:@" + path), "gpu[01-04,09-12]");
  }
  // Nothing else that selects nothing is let through.
  EXPECT_EQ(Select("rack1:&login"), "--limit \"rack1:&login\": selects no hosts");
}

// Where Ansible's reading and a host-range reading both select hosts and
// differ, or Ansible's own order is not fixed, fleetreap refuses.
TEST(HostSelectionRefusalTest, RefusesWhereAnsibleAndRangesCouldDisagree) {
  const char* yaml = R"(all:
  children:
    gpu:
      hosts:
        gpu[01:04]:
    letters:
      hosts:
        node-[a:c]:
    fleet:
      children:
        east: {children: {east1: {hosts: {e1: , e2: }}}}
        west: {children: {west1: {hosts: {w1: , w2: }}}}
    empty:
    templated:
      hosts:
        t1: {ansible_user: "{{ deploy_user }}"}
)";
  Inventory inventory;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseYamlInventory(yaml, "inv/f.yaml", &inventory, &warnings).ok());
  struct Row {
    const char* limit;
    const char* result;
  };
  const Row rows[] = {
      {"gpu[01:02]",
       "--limit \"gpu[01:02]\": Ansible reads this as a subscript of \"gpu\" and selects "
       "gpu[02-03]; as a host range it is gpu[01-02]. Refusing to guess: name the hosts, or "
       "use ~regex"},
      {"gpu[0:1]", "gpu[01-02]"},
      {"node-[a:c]",
       "--limit \"node-[a:c]\": Ansible reads the brackets as a glob character class and "
       "selects node-a,node-c; as a host range it is node-a,node-b,node-c. Refusing to guess: "
       "name the hosts, or use ~regex"},
      {"fleet[0]",
       "--limit \"fleet[0]\": Ansible orders the hosts of group \"fleet\" differently from "
       "run to run, so a subscript on it selects unpredictably; name the hosts instead"},
      {"east[-1]", "e2"},
      {"fleet:!empty", "e[1-2],w[1-2]"},
      {"t1",
       "inv/f.yaml:16:28: host \"t1\": ansible_user \"{{ deploy_user }}\" is a Jinja "
       "template, which fleetreap does not evaluate (write the value itself)"},
  };
  for (const Row& row : rows) {
    std::vector<Host> hosts;
    Status s = SelectHosts(inventory, row.limit, &hosts);
    std::vector<std::string> names;
    for (const Host& h : hosts) names.push_back(h.name);
    EXPECT_EQ(s.ok() ? FoldHostNames(names) : s.message(), row.result) << row.limit;
  }
}

TEST(HostListTest, FormatsAlignedColumns) {
  std::vector<Host> hosts(3);
  hosts[0].name = "gpu01";
  hosts[0].address = "10.0.1.1";
  hosts[0].user = "ops";
  hosts[1].name = "login1";
  hosts[1].address = "bastion.example.com";
  hosts[1].port = 2222;
  hosts[1].user = "ops";
  hosts[2].name = "gpu100";
  hosts[2].address = "gpu100";
  EXPECT_EQ(FormatHostList(hosts),
            "gpu01   10.0.1.1               22  ops\n"
            "login1  bastion.example.com  2222  ops\n"
            "gpu100  gpu100                 22  -\n");
  EXPECT_EQ(FormatHostList({}), "");
}

}  // namespace
}  // namespace fleetreap
