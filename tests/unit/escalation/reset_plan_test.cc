// PlanReset: the reset inside the scope and never on a blind scan.
#include "fleetreap/escalation/reset_plan.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

// A host whose GPUs 0-3 nvidia-persistenced (in its unit) holds; GPU 0 is
// over the threshold with no process (a ghost under the daemon), GPU 3 a
// ghost that nothing holds.
HostView DaemonHost() {
  TrackedHolder daemon;
  daemon.holder.pid = 812;
  daemon.holder.comm = "nvidia-persiste";
  daemon.holder.protected_by = "nvidia-persistenced";
  daemon.holder.fate = HolderFate::kProtected;
  daemon.holder.gpus = {0, 1, 2};
  daemon.holder.owner.unit = "nvidia-persistenced.service";
  HostView view;
  view.holders = {daemon};
  for (int i = 0; i < 4; ++i) {
    GpuReading gpu;
    gpu.index = i;
    gpu.state = i == 0 || i == 3 ? GpuState::kGhost : GpuState::kProtectedOnly;
    view.gpus.push_back(gpu);
  }
  return view;
}

TEST(ResetPlanTest, UnscopedTheDaemonsUnitStopsForItsGhost) {
  ResetPlan plan = PlanReset(DaemonHost(), true);
  EXPECT_EQ(plan.gpus, (std::vector<int>{0, 3}));
  EXPECT_EQ(plan.units, std::vector<std::string>{"nvidia-persistenced.service"});
}

TEST(ResetPlanTest, UnderAScopeNoUnitStopsAndTheCommandsAreNamed) {
  HostView view = DaemonHost();
  view.scoped = true;
  ResetPlan plan = PlanReset(view, true);
  EXPECT_EQ(plan.gpus, std::vector<int>{3});  // nothing holds it
  EXPECT_TRUE(plan.units.empty());
  EXPECT_EQ(plan.refused,
            "the run's scope: GPU 0 would need 'nvidia-persistenced.service' stopped, and these "
            "daemons serve every GPU of the host, inside the scope or not; not done (with the "
            "whole node free: systemctl stop -- 'nvidia-persistenced.service' && nvidia-smi "
            "--gpu-reset -i 0; systemctl start -- 'nvidia-persistenced.service')");
}

TEST(ResetPlanTest, ABlindScanPlansNoReset) {
  HostView view = DaemonHost();
  view.holder_walk_failed = true;
  ResetPlan plan = PlanReset(view, true);
  EXPECT_TRUE(plan.gpus.empty());
  EXPECT_TRUE(plan.units.empty());
  EXPECT_EQ(plan.refused,
            "the scan, which could not see every holder (the holder walk did not run): GPUs 0, 3 "
            "may be held by a process it missed, so no GPU reset is planned");
  view.holder_walk_failed = false;
  view.control_only_left_out = 40;
  plan = PlanReset(view, false);
  EXPECT_TRUE(plan.gpus.empty());
  EXPECT_NE(plan.refused.find("40 control-only holders"), std::string::npos);
}

TEST(ResetPlanTest, WithoutTheSettingTheDaemonIsNamed) {
  ResetPlan plan = PlanReset(DaemonHost(), false);
  EXPECT_EQ(plan.gpus, std::vector<int>{3});
  EXPECT_EQ(plan.refused, "nvidia-persistenced (pid 812)");
}

}  // namespace
}  // namespace fleetreap
