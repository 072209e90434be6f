#include "fleetreap/runner/fleet_plan.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace fleetreap {
namespace {

const std::string kVllm = FLEETREAP_SOURCE_DIR "/playbooks/vllm.yaml";
const std::string kReset = FLEETREAP_SOURCE_DIR "/playbooks/reset.yaml";

// An inventory in a scratch directory: gpu01 and gpu03 name the vllm
// playbook, gpu02 none; only gpu03 becomes.
class FleetPlanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/fleetreap-fleet-plan-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
    inventory_ = dir_ + "/lab.yaml";
    std::ofstream(inventory_) << "all:\n"
                                 "  hosts:\n"
                                 "    gpu01: {fleetreap_playbook: "
                              << kVllm
                              << "}\n"
                                 "    gpu02:\n"
                                 "    gpu03: {fleetreap_playbook: "
                              << kVllm << ", ansible_become: yes}\n";
  }
  void TearDown() override {
    std::remove(inventory_.c_str());
    rmdir(dir_.c_str());
  }
  FleetPlanRequest Request() const {
    FleetPlanRequest request;
    request.hosts = {inventory_};
    return request;
  }

  std::string dir_;
  std::string inventory_;
};

TEST_F(FleetPlanTest, EachHostGetsItsOwnPlaybookOrTheDefault) {
  FleetPlanSet set;
  ASSERT_TRUE(BuildFleetPlans(Request(), &set).ok());
  ASSERT_EQ(set.plans.size(), 3u);
  EXPECT_EQ(set.plans[0].host.name, "gpu01");
  EXPECT_EQ(set.plans[0].playbook->name, "vllm");
  // Never null: a host without one gets the default.
  EXPECT_EQ(set.plans[1].playbook.get(), &DefaultPlaybook());
  EXPECT_EQ(set.playbook_name, DefaultPlaybook().name);
}

TEST_F(FleetPlanTest, PlaybookFlagWinsOverTheInventorysPlaybook) {
  FleetPlanRequest request = Request();
  request.playbook = kReset;
  FleetPlanSet set;
  ASSERT_TRUE(BuildFleetPlans(request, &set).ok());
  ASSERT_EQ(set.plans.size(), 3u);
  for (const FleetPlan& plan : set.plans) {
    EXPECT_EQ(plan.playbook->name, "reset") << plan.host.name;
    EXPECT_EQ(plan.host.playbook, kReset) << plan.host.name;  // what --list-hosts -v shows
  }
  EXPECT_EQ(set.playbook_name, "reset");
}

TEST_F(FleetPlanTest, BecomeFlagOverridesEveryHost) {
  FleetPlanSet without;
  ASSERT_TRUE(BuildFleetPlans(Request(), &without).ok());
  ASSERT_EQ(without.plans.size(), 3u);
  EXPECT_FALSE(without.plans[0].host.become);
  EXPECT_TRUE(without.plans[2].host.become);

  FleetPlanRequest request = Request();
  request.become = true;
  FleetPlanSet with;
  ASSERT_TRUE(BuildFleetPlans(request, &with).ok());
  for (const FleetPlan& plan : with.plans) EXPECT_TRUE(plan.host.become) << plan.host.name;
}

TEST_F(FleetPlanTest, PlaybookCacheLoadsEachFileOnce) {
  // gpu01 and gpu03 name the same file: one load, one shared Playbook.
  FleetPlanSet set;
  ASSERT_TRUE(BuildFleetPlans(Request(), &set).ok());
  ASSERT_EQ(set.plans.size(), 3u);
  EXPECT_EQ(set.plans[0].playbook.get(), set.plans[2].playbook.get());
  // With --playbook every host shares the one the flag names.
  FleetPlanRequest request = Request();
  request.playbook = kReset;
  FleetPlanSet flagged;
  ASSERT_TRUE(BuildFleetPlans(request, &flagged).ok());
  EXPECT_EQ(flagged.plans[0].playbook.get(), flagged.plans[1].playbook.get());
  EXPECT_EQ(flagged.plans[1].playbook.get(), flagged.plans[2].playbook.get());
}

TEST_F(FleetPlanTest, ABadPlaybookFailsBeforeAnyHost) {
  FleetPlanRequest request = Request();
  request.playbook = dir_ + "/missing.yaml";
  FleetPlanSet set;
  Status status = BuildFleetPlans(request, &set);
  EXPECT_FALSE(status.ok());
  EXPECT_TRUE(set.plans.empty());
}

TEST_F(FleetPlanTest, LimitThatMatchesNothingIsUsage) {
  FleetPlanRequest request = Request();
  request.limit = "nothing*";
  FleetPlanSet set;
  EXPECT_EQ(BuildFleetPlans(request, &set).kind(), ErrorKind::kUsage);
}

TEST_F(FleetPlanTest, AnEmptyFailedHostsFileGivesNoPlansAndAWarning) {
  const std::string failed = dir_ + "/failed-hosts.txt";
  std::ofstream(failed).flush();  // the last run left nothing failed
  FleetPlanRequest request = Request();
  request.limit = "@" + failed;
  FleetPlanSet set;
  ASSERT_TRUE(BuildFleetPlans(request, &set).ok());
  EXPECT_TRUE(set.plans.empty());
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_EQ(set.warnings[0],
            "--limit \"@" + failed + "\": " + failed + " is empty: no hosts selected");
}

TEST(FleetPlanLocalTest, LocalIsOneHostWithoutAnInventory) {
  FleetPlanRequest request;
  request.local = true;
  FleetPlanSet set;
  ASSERT_TRUE(BuildFleetPlans(request, &set).ok());
  ASSERT_EQ(set.plans.size(), 1u);
  EXPECT_EQ(set.plans[0].host.address, "localhost");
  EXPECT_EQ(set.plans[0].host.source, "--local");
  EXPECT_EQ(set.plans[0].playbook.get(), &DefaultPlaybook());
}

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

TEST(LoadSlurmHostsTest, RunsSinfoForThePartition) {
  SinfoFake sinfo(Exited(0, "gpu01\ngpu02\n\ngpu01\ngpu03\n"));
  Inventory inventory;
  Status status = LoadSlurmHosts("slurm:h200", &sinfo, std::chrono::seconds(5), &inventory);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(sinfo.commands,
            std::vector<std::string>{"sinfo --noheader --Node --partition='h200' --format=%N"});
  EXPECT_EQ(inventory.path(), "slurm:h200");
  ASSERT_EQ(inventory.hosts().size(), 3u);
  EXPECT_EQ(inventory.hosts()[2].name, "gpu03");
}

TEST(LoadSlurmHostsTest, Errors) {
  struct Case {
    std::string spec;
    CommandResult result;
    ErrorKind kind;
    std::string error;
  };
  CommandResult timed_out;
  timed_out.end = CommandEnd::kTimedOut;
  const Case cases[] = {
      {"slurm:gpu;reboot", Exited(0, "gpu01\n"), ErrorKind::kUsage,
       "--hosts slurm:gpu;reboot: expected slurm:PARTITION (letters, digits, '-', '_', '.')"},
      {"slurm:gpu", Exited(127, "", "sh: 1: sinfo: not found\n"), ErrorKind::kInvalidInput,
       "slurm:gpu: sinfo not found (fleetreap runs it where Slurm's commands work)"},
      {"slurm:gpu", Exited(1, "", "sinfo: error: invalid partition specified: gpu\n"),
       ErrorKind::kInvalidInput,
       "slurm:gpu: sinfo failed (exit 1): \"sinfo: error: invalid partition specified: gpu\""},
      {"slurm:gpu", timed_out, ErrorKind::kInvalidInput, "slurm:gpu: sinfo failed (timed_out)"},
      {"slurm:gpu", Exited(0, "\n"), ErrorKind::kInvalidInput,
       "slurm:gpu: sinfo lists no node in partition gpu"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.error);
    SinfoFake sinfo(c.result);
    Inventory inventory;
    Status status = LoadSlurmHosts(c.spec, &sinfo, std::chrono::seconds(5), &inventory);
    EXPECT_EQ(status.kind(), c.kind);
    EXPECT_EQ(status.message(), c.error);
    if (c.kind == ErrorKind::kUsage) {
      EXPECT_TRUE(sinfo.commands.empty());
    }
  }
}

}  // namespace
}  // namespace fleetreap
