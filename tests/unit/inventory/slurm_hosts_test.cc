#include "fleetreap/inventory/slurm_hosts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/inventory/host_selection.h"

namespace fleetreap {
namespace {

TEST(SlurmHostsTest, Spec) {
  EXPECT_TRUE(IsSlurmHostsSpec("slurm:gpu"));
  EXPECT_FALSE(IsSlurmHostsSpec("inventory/slurm.yaml"));
  EXPECT_EQ(SinfoCommand("gpu"), "sinfo --noheader --Node --partition='gpu' --format=%N");
  std::string partition;
  ASSERT_TRUE(SlurmPartition("slurm:h200.a_b-1", &partition).ok());
  EXPECT_EQ(partition, "h200.a_b-1");
  for (const char* spec : {"slurm:", "slurm:gpu;reboot", "slurm:all", "slurm:ungrouped"}) {
    Status status = SlurmPartition(spec, &partition);
    EXPECT_EQ(status.kind(), ErrorKind::kUsage) << spec;
    EXPECT_EQ(status.message(), std::string("--hosts ") + spec +
                                    ": expected slurm:PARTITION (letters, digits, '-', '_', '.')");
  }
}

TEST(SlurmHostsTest, SinfoOutput) {
  std::vector<std::string> nodes;
  ASSERT_TRUE(ParseSinfoNodes("slurm:gpu", "gpu01\ngpu02\n\ngpu01\n  gpu03 \n", &nodes).ok());
  EXPECT_EQ(nodes, (std::vector<std::string>{"gpu01", "gpu02", "gpu03"}));
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"", "slurm:gpu: sinfo lists no node in partition gpu"},
      {"\n\n", "slurm:gpu: sinfo lists no node in partition gpu"},
      {"gpu01 idle\n", "slurm:gpu: sinfo printed \"gpu01 idle\", not a node name"},
      {"gpu01\ngpu;02\n", "slurm:gpu: sinfo printed \"gpu;02\", not a node name"},
  };
  for (const Case& c : cases) {
    Status status = ParseSinfoNodes("slurm:gpu", c.text, &nodes);
    EXPECT_EQ(status.kind(), ErrorKind::kInvalidInput) << c.text;
    EXPECT_EQ(status.message(), c.error);
  }
}

TEST(SlurmHostsTest, PartitionBecomesAGroup) {
  Inventory inventory = SlurmInventory("slurm:h200", {"gpu01", "gpu02", "gpu03"});
  EXPECT_EQ(inventory.path(), "slurm:h200");
  ASSERT_EQ(inventory.hosts().size(), 3u);
  EXPECT_EQ(inventory.hosts()[2].name, "gpu03");
  EXPECT_EQ(inventory.hosts()[2].address, "gpu03");
  EXPECT_EQ(inventory.hosts()[2].port, 22);
  EXPECT_EQ(inventory.hosts()[2].source, "slurm:h200");
  std::vector<Host> hosts;
  ASSERT_TRUE(SelectHosts(inventory, "h200:!gpu02", &hosts).ok());
  ASSERT_EQ(hosts.size(), 2u);
  EXPECT_EQ(hosts[0].name, "gpu01");
  EXPECT_EQ(hosts[1].name, "gpu03");
  ASSERT_TRUE(SelectHosts(inventory, "", &hosts).ok());
  EXPECT_EQ(hosts.size(), 3u);
  ASSERT_TRUE(SelectHosts(inventory, "h200[1]", &hosts).ok());
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].name, "gpu02");
}

}  // namespace
}  // namespace fleetreap
