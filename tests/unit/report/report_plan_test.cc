#include "fleetreap/report/report_plan.h"

#include <gtest/gtest.h>

#include "support/report_fixture.h"

namespace fleetreap {
namespace {

TEST(ReportPlanTest, EachHolderWithWhatItWouldGetFoldedAcrossHosts) {
  RunReport run = testing_fixture::DryRunFleet();
  run.hosts[0].holders[0].owner.unit = "vllm.service";
  run.hosts[1].holders[0].owner.unit = "vllm.service";
  Holder daemon = testing_fixture::MakeHolder(900, "nvidia-persiste", {}, HolderFate::kProtected);
  daemon.user = "nvidia-persistenced";
  daemon.protected_by = "nvidia-persistenced";
  run.hosts[2].holders = {daemon};
  EXPECT_EQ(RenderPlan(run),
            "gpu[01-02]: would signal 2, stop 1 unit, remove 1 /dev/shm entry\n"
            "    TERM pid 6000 python3 GPU 0 svc-infer unit vllm.service\n"
            "    TERM pid 6001 python3 GPU 1 svc-infer\n"
            "    stop   vllm.service\n"
            "    remove /dev/shm/nccl-xyz\n"
            "gpu03: nothing to do\n"
            "    leave pid 900 nvidia-persiste - nvidia-persistenced protected: "
            "nvidia-persistenced\n");
}

TEST(ReportPlanTest, OnlyDryRunsHaveAPlan) {
  EXPECT_EQ(RenderPlan(testing_fixture::MixedFleet()), "");
}

TEST(ReportPlanTest, HostileNamesStayOnOneLine) {
  RunReport run = testing_fixture::DryRunFleet();
  run.hosts.resize(1);
  run.hosts[0].holders[0].comm = "evil\n\x1b[2Jx";
  run.hosts[0].units_would_stop.clear();
  run.hosts[0].shm_would_remove = {"/dev/shm/a\nb"};
  const std::string plan = RenderPlan(run);
  EXPECT_NE(plan.find("evil\\n\\x1b[2Jx"), std::string::npos) << plan;
  EXPECT_NE(plan.find("remove /dev/shm/a\\nb\n"), std::string::npos) << plan;
}

}  // namespace
}  // namespace fleetreap
