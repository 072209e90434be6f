#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/inventory/inventory.h"
#include "support/inventory_describe.h"

namespace fleetreap {
namespace {

struct Good {
  const char* name;
  const char* ini;
  const char* hosts;
};

const Good kGood[] = {
    {"hosts before a section are ungrouped; [all] hosts too",
     "solo1\n[all]\nsolo2\n[gpus]\ngpu[01:02]\n",
     "solo1 solo1:22 [ungrouped] inv/hosts:1\n"
     "solo2 solo2:22 [ungrouped] inv/hosts:3\n"
     "gpu01 gpu01:22 [gpus] inv/hosts:5\n"
     "gpu02 gpu02:22 [gpus] inv/hosts:5\n"},
    {"values typed by Python's literal rules; comments on host lines",
     "a ansible_port='2201' ansible_user=\"ops\" ansible_become=True # x=1\n"
     "b ansible_become=yes fleetreap_protect=\"['dcgm', 'agent']\"\n"
     "c ansible_become=f ansible_port=0x10\n",
     "a a:2201 user=ops become [ungrouped] inv/hosts:1\n"
     "b b:22 become protect=dcgm,agent [ungrouped] inv/hosts:2\n"
     "c c:16 [ungrouped] inv/hosts:3\n"},
    {":vars values keep a trailing comment; group vars under host vars",
     "[g]\nh1\nh2 ansible_user=own\n[g:vars]\nansible_user = ops # "
     "svc\nfleetreap_expected_gpus=8\n",
     "h1 h1:22 user=ops # svc gpus=8 [g] inv/hosts:2\n"
     "h2 h2:22 user=own gpus=8 [g] inv/hosts:3\n"},
    {"host:port counts where the host first appears; [v6]:port",
     "h:2201\n[g]\nh:2202 ansible_user=u\n[fe80::1]:2203\nfe80::2\n",
     "h h:2201 user=u [g] inv/hosts:1\n"
     "fe80::1 fe80::1:2203 [g] inv/hosts:4\n"
     "fe80::2 fe80::2:22 [g] inv/hosts:5\n"},
    {"children declared before the child, vars before the group",
     "[top:children]\nmid\n[late:vars]\nansible_user=l\n[mid]\nm1\n[late]\nl1\n",
     "m1 m1:22 [mid top] inv/hosts:6\n"
     "l1 l1:22 user=l [late] inv/hosts:8\n"},
    {"ansible_ssh_* wins; ansible_group_priority reorders groups of one depth",
     "[a]\nh ansible_host=x ansible_ssh_host=y ansible_user=u ansible_ssh_user=v\n"
     "[b]\nh\n[a:vars]\nansible_port=1\nansible_group_priority=9\n[b:vars]\nansible_port=2\n",
     "h y:1 user=v [a b] inv/hosts:2\n"},
    {"letter, stride and nested ranges", "n-[a:c]\ns[1:10:4]\nr[1:2]x[a:b]\n",
     "n-a n-a:22 [ungrouped] inv/hosts:1\nn-b n-b:22 [ungrouped] inv/hosts:1\n"
     "n-c n-c:22 [ungrouped] inv/hosts:1\ns1 s1:22 [ungrouped] inv/hosts:2\n"
     "s5 s5:22 [ungrouped] inv/hosts:2\ns9 s9:22 [ungrouped] inv/hosts:2\n"
     "r1xa r1xa:22 [ungrouped] inv/hosts:3\nr1xb r1xb:22 [ungrouped] inv/hosts:3\n"
     "r2xa r2xa:22 [ungrouped] inv/hosts:3\nr2xb r2xb:22 [ungrouped] inv/hosts:3\n"},
    {"plain host/port/user/become are not connection settings",
     "h host=0.0.0.0 port=8000 user=vllm become=true\n", "h h:22 [ungrouped] inv/hosts:1\n"},
    {"; comments and CRLF line ends", "; a comment\r\n[g]\r\nh1\r\n", "h1 h1:22 [g] inv/hosts:3\n"},
};

TEST(InventoryIniTest, ReadsAsAnsiblesIniPlugin) {
  for (const Good& row : kGood) {
    Inventory inventory;
    std::vector<std::string> warnings;
    Status s = ParseIniInventory(row.ini, "inv/hosts", &inventory, &warnings);
    ASSERT_TRUE(s.ok()) << row.name << ": " << s.message();
    EXPECT_EQ(Describe(inventory), row.hosts) << row.name;
  }
}

TEST(InventoryIniTest, RejectsWithFileLineAndAnsiblesWords) {
  struct Bad {
    const char* ini;
    const char* error;
  };
  const Bad rows[] = {
      {"[g:foo]\n", "inv/hosts:1: Section [g:foo] has unknown type: foo"},
      {"[a b]\n",
       "inv/hosts:1: Invalid section entry: '[a b]'. Please make sure that there are no "
       "spaces in the section entry, and that there are no other invalid characters"},
      {"[g:vars]\nansible_user\n[g]\n", "inv/hosts:2: Expected key=value, got: ansible_user"},
      {"[g:children]\na b\n", "inv/hosts:2: Expected group name, got: a b"},
      {"h ansible_user\n",
       "inv/hosts:1: Expected key=value host variable assignment, got: "
       "ansible_user"},
      {"h ansible_user='ops\n",
       "inv/hosts:1: Error parsing host definition 'h ansible_user='ops': No closing quotation"},
      {"h:\n",
       "inv/hosts:1: Invalid host pattern 'h:' supplied, ending in ':' is not allowed, "
       "this character is reserved to provide a port."},
      {"---\n",
       "inv/hosts:1: Invalid host pattern '---' supplied, '---' is normally a sign "
       "this is a YAML file."},
      {"[g:vars]\na=1\n", "inv/hosts:1: Section [g:vars] not valid for undefined group: g"},
      {"[p:children]\nc\n", "inv/hosts:2: Section [p:children] includes undefined group: c"},
      {"gpu[01-04]\n",
       "inv/hosts:1: host range \"gpu[01-04]\": Ansible reads only [begin:end] or "
       "[begin:end:step] ranges, not ClusterShell's [01-04]: write gpu[01:04]"},
      {"ops@gpu01\n", "inv/hosts:1: \"ops@gpu01\" is not a valid host name"},
      {"h ansible_port=70000\n",
       "inv/hosts:1: host \"h\": ansible_port must be 1-65535, got 70000"},
      {"h:70000\n", "inv/hosts:1: host \"h\": ansible_port must be 1-65535, got 70000"},
      {"h ansible_become=maybe\n",
       "inv/hosts:1: host \"h\": ansible_become must be true or false, got \"maybe\""},
      {"[g]\nh\n[g:vars]\nansible_group_priority=high\n",
       "inv/hosts:4: group \"g\": ansible_group_priority must be a number, got \"high\""},
      {"[a:children]\nb\n[b:children]\na\n[b]\n",
       "inv/hosts:4: group \"a\" contains itself: a -> b -> a"},
      {"# nothing\n[empty]\n", "inv/hosts: no hosts in the inventory"},
  };
  for (const Bad& row : rows) {
    Inventory inventory;
    std::vector<std::string> warnings;
    Status s = ParseIniInventory(row.ini, "inv/hosts", &inventory, &warnings);
    EXPECT_EQ(s.kind(), ErrorKind::kInvalidInput) << row.ini;
    EXPECT_EQ(s.message(), row.error) << row.ini;
  }
}

TEST(InventoryIniTest, JinjaInAUsedValueRefusesTheHostNotTheFile) {
  Inventory inventory;
  std::vector<std::string> warnings;
  ASSERT_TRUE(ParseIniInventory("ok\nt ansible_host=\"{{ lookup('env', 'X') }}\"\n", "inv/hosts",
                                &inventory, &warnings)
                  .ok());
  EXPECT_EQ(inventory.hosts()[0].problem, "");
  EXPECT_EQ(inventory.hosts()[1].problem,
            "inv/hosts:2: host \"t\": ansible_host \"{{ lookup('env', 'X') }}\" is a Jinja "
            "template, which fleetreap does not evaluate (write the value itself)");
}

TEST(InventoryIniTest, NotesIgnoredPlainVariablesOnce) {
  Inventory inventory;
  std::vector<std::string> warnings, notes;
  ASSERT_TRUE(
      ParseIniInventory("a user=x\nb user=y port=1\n", "inv/hosts", &inventory, &warnings, &notes)
          .ok());
  EXPECT_EQ(notes, (std::vector<std::string>{
                       "inv/hosts:1: variable \"user\" is not a connection setting (Ansible's "
                       "are ansible_host, ansible_port, ansible_user, "
                       "ansible_ssh_private_key_file, ansible_become); ignored",
                       "inv/hosts:2: variable \"port\" is not a connection setting (Ansible's "
                       "are ansible_host, ansible_port, ansible_user, "
                       "ansible_ssh_private_key_file, ansible_become); ignored"}));
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace fleetreap
