#include "fleetreap/report/report_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "fleetreap/base/text.h"
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
            "plan: would signal 4 processes on 2 hosts, remove 2 /dev/shm entries, stop 2 units\n"
            "    (-v lists each host's PIDs and /dev/shm entries)\n"
            "gpu[01-02] (2 hosts, each): would signal 2, stop 1 unit, remove 1 /dev/shm entry\n"
            "    TERM x1 python3 GPU 0 svc-infer unit vllm.service\n"
            "    TERM x1 python3 GPU 1 svc-infer\n"
            "    stop   vllm.service\n"
            "    remove 1 /dev/shm entry\n"
            "gpu03: nothing to signal\n"
            "    leave x1 nvidia-persiste - nvidia-persistenced protected: "
            "nvidia-persistenced\n");
}

// 200 hosts running the same job under their own PIDs fold into one block
// of a few lines; the workers are named by argv[0] (the TP rank), not by
// the kernel's cut comm; -v lists each host's PIDs.
TEST(ReportPlanTest, HostsFoldOnTheShapeOfTheirPlanNotOnPids) {
  RunReport run;
  run.dry_run = true;
  for (int h = 0; h < 200; ++h) {
    HostReport host;
    host.status = HostStatus::kDirty;
    host.name = "gpu" +
                std::string(h + 1 < 10    ? "00"
                            : h + 1 < 100 ? "0"
                                          : "") +
                std::to_string(h + 1);
    for (int rank = 0; rank < 8; ++rank) {
      Holder worker = testing_fixture::MakeHolder(1000 * h + 182 + rank, "VLLM::Worker_TP",
                                                  {0, 1, 2, 3, 4, 5, 6, 7}, HolderFate::kWouldTerm);
      worker.cmdline = "VLLM::Worker_TP" + std::to_string(rank);
      worker.user = "root";
      worker.owner.unit = "vllm.service";
      host.holders.push_back(worker);
    }
    if (h < 14) host.shm_would_remove = {"/dev/shm/sem.mp-" + std::to_string(h)};
    run.hosts.push_back(host);
  }
  const std::string plan = RenderPlan(run);
  EXPECT_EQ(plan.substr(0, plan.find("\ngpu")),
            "plan: would signal 1,600 processes on 200 hosts, remove 14 /dev/shm entries, "
            "stop 0 units\n    (-v lists each host's PIDs and /dev/shm entries)");
  EXPECT_NE(plan.find("gpu[015-200] (186 hosts, each): would signal 8\n"
                      "    TERM x8 VLLM::Worker_TP[0-7] GPUs 0-7 root unit vllm.service\n"),
            std::string::npos)
      << plan;
  EXPECT_NE(plan.find("gpu[001-014] (14 hosts, each): would signal 8, remove 1 /dev/shm entry"),
            std::string::npos)
      << plan;
  EXPECT_LE(std::count(plan.begin(), plan.end(), '\n'), 9) << plan;
  EXPECT_EQ(plan.find("pid"), std::string::npos);
  const std::string verbose = RenderPlan(run, true);
  EXPECT_NE(verbose.find("      gpu003: TERM 2182-2189; remove /dev/shm/sem.mp-2\n"),
            std::string::npos)
      << verbose.substr(0, 2000);
  EXPECT_NE(verbose.find("      gpu200: TERM 199182-199189\n"), std::string::npos);
}

// On an 80-column terminal every line fits: a row whose owner (a long unit
// name and why it is left) does not fit after its columns has it on the
// next line, the total breaks after its commas.
TEST(ReportPlanTest, LinesFitTheWidth) {
  RunReport run = testing_fixture::DryRunFleet();
  const std::string unit = "vllm-tp8-serving@meta-llama-Llama-3.1-405B-Instruct.service";
  run.hosts[0].holders[0].owner.unit = unit;
  Holder daemon = testing_fixture::MakeHolder(900, "nv-fabricmanager", {0}, HolderFate::kProtected);
  daemon.user = "root";
  daemon.owner.unit = "nvidia-fabricmanager.service";
  daemon.protected_by = "nvidia-fabricmanager (protect_units: nvidia-fabricmanager.service)";
  run.hosts[0].holders.push_back(daemon);
  for (const bool verbose : {false, true}) {
    const std::string plan = RenderPlan(run, verbose, 80);
    for (const std::string& line : SplitLines(plan)) {
      EXPECT_LE(line.size(), 80U) << line << "\n" << plan;
    }
    EXPECT_NE(plan.find("    TERM  x1 python3          GPU 0 svc-infer\n"
                        "        unit " +
                        unit + "\n"),
              std::string::npos)
        << plan;
    EXPECT_NE(
        plan.find("\n        unit nvidia-fabricmanager.service  protected: nvidia-fabricmanager\n"
                  "        (protect_units: "),
        std::string::npos)
        << plan;
  }
  // A row too wide without an owner gets no empty line under it.
  EXPECT_EQ(RenderPlan(run, false, 30).find("\n        \n"), std::string::npos);
  // Off a terminal (0): the table's width, 100 columns.
  for (const std::string& line : SplitLines(RenderPlan(run, true, 0))) {
    EXPECT_LE(line.size(), 100U) << line;
  }
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
  const std::string plan = RenderPlan(run, true);  // -v names the /dev/shm entries
  EXPECT_NE(plan.find("evil\\n\\x1b[2Jx"), std::string::npos) << plan;
  EXPECT_NE(plan.find("remove /dev/shm/a\\nb\n"), std::string::npos) << plan;
}

}  // namespace
}  // namespace fleetreap
