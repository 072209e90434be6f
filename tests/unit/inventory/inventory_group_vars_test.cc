#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "fleetreap/inventory/inventory.h"

namespace fleetreap {
namespace {

namespace fs = std::filesystem;

class InventoryGroupVarsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "group_vars_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::path p = fs::path(dir_) / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  const Host& HostNamed(const Inventory& inventory, const std::string& name) {
    return inventory.hosts()[inventory.HostIndex(name)];
  }
  std::string dir_;
};

TEST_F(InventoryGroupVarsTest, ReadsFilesAndDirectoriesWithAnsiblesPrecedence) {
  Write("hosts",
        "login1 ansible_user=inline_user\n[login]\nlogin1\n[gpus]\ngpu0[1:4]\n"
        "[rack_b]\ngpu03\ngpu04\n[gpus:vars]\nansible_port=2000\n");
  Write("group_vars/all.yml", "ansible_user: all_user\nfleetreap_expected_gpus: 8\n");
  Write("group_vars/gpus/10-conn.yml",
        "ansible_user: gpus_user\nansible_port: 2100\n"
        "ansible_become: yes\n");
  Write("group_vars/gpus/20-more.yaml", "ansible_port: 2200\n");
  Write("group_vars/gpus/.hidden.yml", "ansible_port: 9999\n");
  Write("group_vars/gpus/backup.yml~", "ansible_port: 9998\n");
  Write("group_vars/gpus/notes.txt", "ansible_port: 9997\n");
  Write("group_vars/rack_b.json",
        "{\"ansible_user\": \"rack_b_user\", "
        "\"ansible_ssh_private_key_file\": \"keys/rack_b\"}\n");
  Write("group_vars/login", "ansible_port: 2300\n");
  Write("group_vars/login.yml", "ansible_port: 1\n");  // "login" is found first
  Write("host_vars/gpu03.yaml", "ansible_host: 10.0.0.3\n");
  Write("host_vars/login1/main.yml", "ansible_user: hv_user\n");
  Inventory inventory;
  std::vector<std::string> warnings;
  Status s = LoadInventory(dir_ + "/hosts", &inventory, &warnings);
  ASSERT_TRUE(s.ok()) << s.message();
  const Host& gpu01 = HostNamed(inventory, "gpu01");
  EXPECT_EQ(gpu01.user, "gpus_user");
  EXPECT_EQ(gpu01.port, 2200);
  EXPECT_TRUE(gpu01.become);
  EXPECT_EQ(gpu01.expected_gpus, 8);
  const Host& gpu03 = HostNamed(inventory, "gpu03");
  EXPECT_EQ(gpu03.user, "rack_b_user");  // rack_b sorts after gpus at one depth
  EXPECT_EQ(gpu03.identity_file, dir_ + "/keys/rack_b");
  EXPECT_EQ(gpu03.address, "10.0.0.3");
  const Host& login1 = HostNamed(inventory, "login1");
  EXPECT_EQ(login1.user, "hv_user");
  EXPECT_EQ(login1.port, 2300);
}

TEST_F(InventoryGroupVarsTest, ErrorsNameTheFile) {
  struct Row {
    const char* file;
    const char* text;
    const char* error;  // after the directory
  };
  const Row rows[] = {
      {"group_vars/all.yml", "- a\n",
       "/group_vars/all.yml:1:1: expected a mapping of variables, got a list"},
      {"group_vars/all.yml", "ansible_port: ssh\n",
       "/group_vars/all.yml:1:15: group \"all\": ansible_port must be a port number 1-65535, "
       "got \"ssh\""},
      {"host_vars/h1.yml", "a: {b\n",
       "/host_vars/h1.yml:2:1: YAML syntax error: end of map flow not found"},
  };
  for (const Row& row : rows) {
    fs::remove_all(dir_);
    Write("inventory.yml", "all:\n  hosts:\n    h1:\n");
    Write(row.file, row.text);
    Inventory inventory;
    std::vector<std::string> warnings;
    Status s = LoadInventory(dir_ + "/inventory.yml", &inventory, &warnings);
    EXPECT_EQ(s.message(), dir_ + row.error) << row.file;
  }
}

TEST_F(InventoryGroupVarsTest, AGroupVarsFileIsSkippedWithAWarning) {
  Write("inventory.yml", "all:\n  hosts:\n    h1:\n");
  Write("group_vars", "not a directory\n");
  Inventory inventory;
  std::vector<std::string> warnings;
  ASSERT_TRUE(LoadInventory(dir_ + "/inventory.yml", &inventory, &warnings).ok());
  EXPECT_EQ(
      warnings,
      (std::vector<std::string>{dir_ + "/group_vars: not a directory, skipped (as Ansible does)"}));
}

}  // namespace
}  // namespace fleetreap
