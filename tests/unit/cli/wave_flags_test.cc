#include "fleetreap/cli/wave_flags.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace fleetreap {
namespace {

std::vector<FleetPlan> Hosts(const std::vector<std::pair<std::string, std::string>>& racks) {
  std::vector<FleetPlan> plans;
  for (const auto& [name, rack] : racks) {
    FleetPlan plan;
    plan.host.name = name;
    plan.host.vars["gpu_model"] = "h200";
    if (!rack.empty()) plan.host.vars["rack"] = rack;
    plans.push_back(plan);
  }
  return plans;
}

TEST(WaveFlagsTest, MaxFailAloneIsRefusedForItWouldCapNothing) {
  Options o;
  o.hosts = {"inv.yaml"};
  o.max_fail = "2";
  EXPECT_EQ(CheckWaveFlags(o),
            "--max-fail 2: the cap is checked between waves, and without --canary, --waves or "
            "--wave-by the whole selection is one wave; add one (e.g. --canary 1)");
  o.canary = 1;
  EXPECT_EQ(CheckWaveFlags(o), "");
  o.canary = 0;
  o.waves = "10%,100%";
  EXPECT_EQ(CheckWaveFlags(o), "");
  o.waves.clear();
  o.wave_by = "rack";
  EXPECT_EQ(CheckWaveFlags(o), "");
}

// WavePlanFor with --wave-by "by" over "plans": its status, the warning.
Status PlanBy(const std::string& by, const std::vector<FleetPlan>& plans, std::string* warning,
              std::vector<Wave>* waves) {
  Options o;
  o.wave_by = by;
  FailCap cap;
  return WavePlanFor(o, plans, waves, &cap, warning);
}

TEST(WaveFlagsTest, AWaveByVariableNoHostSetsIsRefused) {
  std::vector<Wave> waves;
  std::string warning;
  Status status = PlanBy("rakc", Hosts({{"gpu01", "r1"}, {"gpu02", "r2"}}), &warning, &waves);
  EXPECT_EQ(status.kind(), ErrorKind::kUsage);
  EXPECT_EQ(status.message(),
            "--wave-by rakc: no selected host sets it; hosts set: gpu_model, rack");
}

TEST(WaveFlagsTest, HostsLackingTheWaveByVariableAreWarnedAboutInOneLine) {
  std::vector<Wave> waves;
  std::string warning;
  ASSERT_TRUE(
      PlanBy("rack", Hosts({{"gpu01", "r1"}, {"gpu02", ""}, {"gpu03", ""}}), &warning, &waves)
          .ok());
  EXPECT_EQ(warning,
            "--wave-by rack: 2 of 3 hosts do not set it (gpu[02-03]); they form one unit of "
            "their own, shown as (none)");
  ASSERT_EQ(waves.size(), 2u);
  ASSERT_TRUE(PlanBy("rack", Hosts({{"gpu01", "r1"}, {"gpu02", "r2"}}), &warning, &waves).ok());
  EXPECT_EQ(warning, "");
}

}  // namespace
}  // namespace fleetreap
