// The words of each finding kind, and the reason and notes a host's
// findings give every report.
#include "fleetreap/report/host_findings.h"

#include <gtest/gtest.h>

#include "fleetreap/report/cause_fold.h"

namespace fleetreap {
namespace {

namespace fk = finding_kind;

HostFinding Make(const char* kind) {
  HostFinding finding;
  finding.kind = kind;
  return finding;
}

TEST(HostFindingsTest, EachKindIsWorded) {
  HostFinding unkillable = Make(fk::kUnkillableHolder);
  unkillable.pids = {300, 301};
  unkillable.names = {"VLLM::Worker_TP", "python3"};
  unkillable.detail = "DZ";
  EXPECT_EQ(HostFindingText(unkillable),
            "unkillable holder left: pid 300 (VLLM::Worker_TP) in state D, 301 (python3) in "
            "state Z");
  HostFinding newcomer = Make(fk::kNewcomerWithoutGpu);
  newcomer.pids = {11, 500};
  newcomer.names = {"python3", ""};
  EXPECT_EQ(HostFindingText(newcomer),
            "pid 11 (python3), started by 500 after its GPU holder was signalled, holds no GPU "
            "yet");
  HostFinding left = Make(fk::kControlOnlyLeftOut);
  left.count = 2500;
  EXPECT_EQ(HostFindingText(left),
            "2500 processes hold only NVIDIA control devices (/dev/nvidiactl, "
            "/dev/nvidia-uvm...) and no GPU memory: more than a scan describes, so none of them "
            "was described or signalled");
  HostFinding blind = Make(fk::kRespawnWatchBlind);
  blind.pids = {7, 8};
  EXPECT_EQ(HostFindingText(blind),
            "respawn watch blind: the kernel lists no children (no /proc/PID/task/*/children, "
            "CONFIG_PROC_CHILDREN off) of pid 7, 8: a worker it starts again is seen only once "
            "it holds a GPU");
  HostFinding gpus = Make(fk::kGpusNotEmpty);
  gpus.gpus = {2, 6};
  gpus.mib = 2048;
  EXPECT_EQ(HostFindingText(gpus), "GPUs 2,6 not empty (2048 MiB)");
}

TEST(HostFindingsTest, TheReasonAndNotesComeFromTheFindings) {
  HostReport host;
  host.notes = {"audit: 2 lines not written"};
  HostFinding walk = Make(fk::kHolderWalkFailed);
  walk.reason = true;
  walk.note = true;
  HostFinding blind = Make(fk::kRespawnWatchBlind);
  blind.pids = {7};
  blind.note = true;
  host.findings = {walk, blind, Make(fk::kGpusNotEmpty)};
  EXPECT_EQ(HostMessage(host), HostFindingText(walk));
  EXPECT_EQ(HostNotes(host),
            (std::vector<std::string>{"audit: 2 lines not written", HostFindingText(walk),
                                      HostFindingText(blind)}));
  host.error_message = "host deadline reached";
  EXPECT_EQ(HostMessage(host), "host deadline reached");
}

HostFinding Outlived(int64_t count) {
  HostFinding cause = Make(fk::kCause);
  cause.cause = holder_cause::kOutlivedUnitStop;
  cause.units = {"vllm.service"};
  cause.kill_mode = "process";
  cause.count = count;
  return cause;
}

TEST(HostFindingsTest, ARestarterIsNamedWithItsStopCommand) {
  HostFinding alive = Make(fk::kRestarterAlive);
  Holder p;
  p.pid = 500;
  p.comm = "supervisord";
  p.cmdline = "/usr/bin/python3 /usr/bin/supervisord -n";
  p.user = "alice";
  p.owner.cgroup = "/user.slice/session-4.scope";
  alive.processes = {p};
  alive.pids = {500};
  alive.detail = "kill 500";
  EXPECT_EQ(HostFindingText(alive),
            "restarter alive: pid 500 (supervisord), /usr/bin/python3 /usr/bin/supervisord -n, "
            "user alice, cgroup /user.slice/session-4.scope, which started a signalled GPU "
            "holder, was watched and lives on; stop it with: kill 500");
  HostFinding unit = Make(fk::kRestarterAlive);
  unit.units = {"trainer.service"};
  unit.restart = "always";
  unit.restart_sec = "5s";
  unit.detail = "systemctl stop trainer.service";
  EXPECT_EQ(HostFindingText(unit),
            "restarter alive: unit trainer.service (Restart=always, RestartSec=5s) starts its "
            "holders again on its own; stop it with: systemctl stop trainer.service");
}

TEST(HostFindingsTest, HostsAreGroupedByCauseOnItsValues) {
  EXPECT_EQ(HostFindingText(Outlived(8)),
            "cause: 8 holders outlived the stop of unit vllm.service (KillMode=process), still "
            "in its cgroup: set KillMode=control-group (or mixed) in the unit");
  CauseFold fold;
  for (int i = 0; i < 3; ++i) {
    HostReport host;
    host.name = "gpu0" + std::to_string(i + 1);
    host.findings = {Outlived(i == 2 ? 6 : 8)};
    fold.Add(static_cast<size_t>(i), host);
  }
  HostReport other;
  other.name = "gpu09";
  HostFinding orphan = Make(fk::kCause);
  orphan.cause = holder_cause::kOrphan;
  orphan.count = 1;
  orphan.names = {"bob"};
  orphan.detail = "/user.slice/session-9.scope";
  other.findings = {orphan};
  fold.Add(8, other);
  EXPECT_EQ(fold.Lines(),
            (std::vector<std::string>{
                "gpu[01-03]: 3 hosts: 22 holders outlived the stop of unit vllm.service "
                "(KillMode=process), still in its cgroup: set KillMode=control-group (or mixed) "
                "in the unit",
                "gpu09: 1 holder re-parented to init after their parent died (user bob): end "
                "workers with their launcher (a process group, PR_SET_PDEATHSIG) or run the job "
                "as a unit"}));
  CauseFold same;
  for (int i = 0; i < 2; ++i) {
    HostReport host;
    host.name = "gpu0" + std::to_string(i + 1);
    host.findings = {Outlived(8)};
    same.Add(static_cast<size_t>(i), host);
  }
  ASSERT_EQ(same.Lines().size(), 1U);
  EXPECT_EQ(same.Lines()[0].rfind("gpu[01-02]: 2 hosts, each: 8 holders outlived", 0), 0U)
      << same.Lines()[0];
}

}  // namespace
}  // namespace fleetreap
