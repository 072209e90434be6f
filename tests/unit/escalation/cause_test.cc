// Restarters and causes: who may start a holder again (named, with the one
// command that stops it) and why a host's holders were there.
#include "fleetreap/escalation/cause.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

namespace fk = finding_kind;
namespace hc = holder_cause;

Holder Process(int pid, const std::string& comm, int ppid = 1) {
  Holder p;
  p.pid = pid;
  p.ppid = ppid;
  p.comm = comm;
  p.user = "alice";
  p.owner.cgroup = "/user.slice/user-1000.slice/session-4.scope";
  return p;
}

TrackedHolder Signalled(Holder holder, int round = 1) {
  TrackedHolder t;
  t.holder = std::move(holder);
  t.holder.fate = HolderFate::kTerminated;
  t.holder.round = round;
  t.present = false;
  t.term_sent = true;
  t.signalled_at = 5000;
  return t;
}

TEST(CauseTest, TheStopCommandIsNeverAGuess) {
  Holder p = Process(500, "supervisord");
  EXPECT_EQ(StopCommandFor(p), "kill 500");
  p.owner.unit = "supervisor.service";
  EXPECT_EQ(StopCommandFor(p), "systemctl stop supervisor.service");
  p.owner.container_runtime = "docker";
  p.owner.container_id = std::string(64, 'a');
  EXPECT_EQ(StopCommandFor(p), "docker stop aaaaaaaaaaaa");
  p.owner.container_runtime = "containerd";
  EXPECT_EQ(StopCommandFor(p), "");
  p.owner.pod_uid = "0f1e2d3c-0000-4000-8000-000000000001";
  EXPECT_EQ(StopCommandFor(p), "");  // its controller would start it again
  p.owner.slurm_job = "42";
  EXPECT_EQ(StopCommandFor(p), "scancel 42");
}

TEST(CauseTest, ALiveParentAndARestartingUnitAreNamed) {
  HostView view;
  Holder supervisor = Process(500, "supervisord");
  supervisor.cmdline = "/usr/bin/python3 /usr/bin/supervisord -n";
  view.restarters = {supervisor};
  Holder worker = Process(10, "python3", 1);
  worker.owner.unit = "trainer.service";
  worker.owner.unit_restart = "always";
  view.holders = {Signalled(worker)};
  view.units["trainer.service"] = {"always", "5s", "control-group", "/system.slice/x", 0};
  std::vector<HostFinding> found = RestarterFindings(view, false);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0].kind, fk::kRestarterAlive);
  EXPECT_EQ(found[0].pids, std::vector<int>{500});
  EXPECT_EQ(found[0].detail, "kill 500");
  ASSERT_EQ(found[0].processes.size(), 1u);
  EXPECT_TRUE(found[0].note);
  EXPECT_EQ(found[1].units, std::vector<std::string>{"trainer.service"});
  EXPECT_EQ(found[1].restart_sec, "5s");
  EXPECT_EQ(found[1].detail, "systemctl stop trainer.service");
  // The playbook stopped that unit: only the parent is left.
  view.active_units = {"trainer.service"};
  EXPECT_EQ(RestarterFindings(view, true).size(), 1u);
}

TEST(CauseTest, WorkersThatOutlivedTheirUnitsStop) {
  HostView view;
  for (int pid = 10; pid < 18; ++pid) {
    Holder worker = Process(pid, "VLLM::Worker_TP", 1);
    worker.owner.unit = "vllm.service";
    view.holders.push_back(Signalled(worker));
  }
  view.units["vllm.service"] = {"no", "100ms", "process", "/system.slice/vllm.service", 0};
  std::optional<HostFinding> cause = HolderCause(view, false, "", {});
  ASSERT_TRUE(cause.has_value());
  EXPECT_EQ(cause->cause, hc::kOutlivedUnitStop);
  EXPECT_EQ(cause->count, 8);
  EXPECT_EQ(cause->kill_mode, "process");
  // Still running (a main PID), and not stopped by the playbook.
  view.units["vllm.service"].main_pid = 7;
  EXPECT_EQ(HolderCause(view, false, "", {})->cause, hc::kUnitRunning);
  // Stopped by the playbook, and they were still there to be signalled.
  view.active_units = {"vllm.service"};
  EXPECT_EQ(HolderCause(view, true, "", {})->cause, hc::kOutlivedUnitStop);
}

TEST(CauseTest, OrphansJobsAndRestarters) {
  HostView view;
  view.holders = {Signalled(Process(10, "python3", 1)), Signalled(Process(11, "python3", 1)),
                  Signalled(Process(12, "python3", 77))};
  std::optional<HostFinding> cause = HolderCause(view, false, "", {});
  EXPECT_EQ(cause->cause, hc::kOrphan);
  EXPECT_EQ(cause->count, 2);
  EXPECT_EQ(cause->names, std::vector<std::string>{"alice"});
  view.holders = {Signalled(Process(12, "python3", 77))};
  EXPECT_EQ(HolderCause(view, false, "", {})->cause, hc::kJobOutsideUnit);
  // The parent started them again: it is the cause, described when alive.
  view.restarters = {Process(77, "raylet")};
  const std::vector<HostFinding> alive = RestarterFindings(view, false);
  cause = HolderCause(view, false, "77 (raylet)", alive);
  EXPECT_EQ(cause->cause, hc::kRestarter);
  EXPECT_EQ(cause->kind, fk::kCause);
  EXPECT_EQ(cause->pids, std::vector<int>{77});
  ASSERT_EQ(cause->processes.size(), 1u);
  EXPECT_FALSE(cause->note);
  // Protected holders say nothing about why the GPUs were held.
  view.holders[0].holder.fate = HolderFate::kProtected;
  EXPECT_FALSE(HolderCause(view, false, "", {}).has_value());
}

}  // namespace
}  // namespace fleetreap
