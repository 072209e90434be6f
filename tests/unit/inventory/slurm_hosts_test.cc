#include "fleetreap/inventory/slurm_hosts.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/inventory/host_selection.h"

namespace fleetreap {
namespace {

// Answers every command with one result and records the commands.
class SinfoFake : public Transport {
 public:
  explicit SinfoFake(CommandResult result) : result_(std::move(result)) {}
  Status Connect(std::chrono::steady_clock::time_point) override { return Status::Ok(); }
  CommandResult Run(const std::string& command, std::chrono::milliseconds) override {
    commands.push_back(command);
    return result_;
  }
  void Close() override {}
  std::string Describe() const override { return "fake"; }
  std::vector<std::string> commands;

 private:
  CommandResult result_;
};

CommandResult Exited(int code, std::string out, std::string err = "") {
  CommandResult result;
  result.end = CommandEnd::kExited;
  result.exit_code = code;
  result.out = std::move(out);
  result.err = std::move(err);
  return result;
}

TEST(SlurmHostsTest, Spec) {
  EXPECT_TRUE(IsSlurmHostsSpec("slurm:gpu"));
  EXPECT_FALSE(IsSlurmHostsSpec("inventory/slurm.yaml"));
  EXPECT_EQ(SinfoCommand("gpu"), "sinfo --noheader --Node --partition='gpu' --format=%N");
}

TEST(SlurmHostsTest, PartitionBecomesAGroup) {
  SinfoFake sinfo(Exited(0, "gpu01\ngpu02\n\ngpu01\ngpu03\n"));
  Inventory inventory;
  Status status = LoadSlurmHosts("slurm:h200", &sinfo, std::chrono::seconds(5), &inventory);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(sinfo.commands,
            std::vector<std::string>{"sinfo --noheader --Node --partition='h200' --format=%N"});
  EXPECT_EQ(inventory.path(), "slurm:h200");
  ASSERT_EQ(inventory.hosts().size(), 3u);
  EXPECT_EQ(inventory.hosts()[2].name, "gpu03");
  EXPECT_EQ(inventory.hosts()[2].address, "gpu03");
  EXPECT_EQ(inventory.hosts()[2].port, 22);
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

TEST(SlurmHostsTest, Errors) {
  struct Case {
    std::string spec;
    CommandResult result;
    ErrorKind kind;
    std::string error;
  };
  CommandResult timed_out;
  timed_out.end = CommandEnd::kTimedOut;
  const Case cases[] = {
      {"slurm:", Exited(0, "gpu01\n"), ErrorKind::kUsage,
       "--hosts slurm:: expected slurm:PARTITION (letters, digits, '-', '_', '.')"},
      {"slurm:gpu;reboot", Exited(0, "gpu01\n"), ErrorKind::kUsage,
       "--hosts slurm:gpu;reboot: expected slurm:PARTITION (letters, digits, '-', '_', '.')"},
      {"slurm:all", Exited(0, "gpu01\n"), ErrorKind::kUsage,
       "--hosts slurm:all: expected slurm:PARTITION (letters, digits, '-', '_', '.')"},
      {"slurm:gpu", Exited(127, "", "sh: 1: sinfo: not found\n"), ErrorKind::kInvalidInput,
       "slurm:gpu: sinfo not found (fleetreap runs it where Slurm's commands work)"},
      {"slurm:gpu", Exited(1, "", "sinfo: error: invalid partition specified: gpu\n"),
       ErrorKind::kInvalidInput,
       "slurm:gpu: sinfo failed (exit 1): \"sinfo: error: invalid partition specified: gpu\""},
      {"slurm:gpu", timed_out, ErrorKind::kInvalidInput, "slurm:gpu: sinfo failed (timed_out)"},
      {"slurm:gpu", Exited(0, "\n"), ErrorKind::kInvalidInput,
       "slurm:gpu: sinfo lists no node in partition gpu"},
      {"slurm:gpu", Exited(0, "gpu01 idle\n"), ErrorKind::kInvalidInput,
       "slurm:gpu: sinfo printed \"gpu01 idle\", not a node name"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    SinfoFake sinfo(c.result);
    Inventory inventory;
    Status status = LoadSlurmHosts(c.spec, &sinfo, std::chrono::seconds(5), &inventory);
    EXPECT_EQ(status.kind(), c.kind);
    EXPECT_EQ(status.message(), c.error);
  }
}

}  // namespace
}  // namespace fleetreap
