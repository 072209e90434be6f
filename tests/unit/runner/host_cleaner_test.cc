#include "fleetreap/runner/host_cleaner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "fleetreap/report/host_findings.h"
#include "fleetreap/runner/host_steps.h"
#include "support/fake_clock.h"
#include "support/fake_host_steps.h"

namespace fleetreap {
namespace {

using fake_host::Behavior;
using fake_host::FakeHost;
using fake_host::FakeProc;
using fake_host::FakeSteps;
using std::chrono::milliseconds;

FakeProc Worker(int pid, int gpu, int ppid = 100) {
  FakeProc p;
  p.pid = pid;
  p.ppid = ppid;
  p.comm = "VLLM::Worker_TP";
  p.exe = "/usr/bin/python3.11";
  p.gpus = {gpu};
  p.mib = 96000;
  return p;
}

FakeHost Incident() {
  FakeHost host;
  FakeProc server;
  server.pid = 100;
  server.comm = "vllm";
  server.exe = "/usr/bin/python3.11";
  server.unit = "vllm.service";
  host.procs.push_back(server);
  for (int i = 0; i < 8; ++i) host.procs.push_back(Worker(200 + i, i));
  host.shm = {"nccl-AbC123", "psm_1f2e"};
  return host;
}

struct Outcome {
  HostReport report;
  std::string log;
  milliseconds slept;
};

Outcome Clean(FakeHost host, const Playbook& playbook, bool dry_run = false,
              const Scope& scope = Scope()) {
  FakeClock clock;
  FakeSteps steps(std::move(host), &clock);
  Host h;
  h.name = "gpu01";
  h.expected_gpus = 8;
  HostJob job;
  job.host = &h;
  job.playbook = &playbook;
  job.dry_run = dry_run;
  job.clock = &clock;
  job.scope = scope;
  Outcome outcome{CleanHostWith(steps, job), steps.Log(), clock.slept()};
  return outcome;
}

Playbook Vllm() {
  Playbook p;
  Status status = LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/vllm.yaml", &p);
  EXPECT_TRUE(status.ok()) << status.ToString();
  return p;
}

int CountFate(const HostReport& report, HolderFate fate) {
  int n = 0;
  for (const Holder& h : report.holders) n += h.fate == fate;
  return n;
}

TEST(HostCleanerTest, CleanHostTakesInspectShmVerify) {
  FakeHost host;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan shm+smi");
  EXPECT_EQ(o.report.status, HostStatus::kClean) << HostMessage(o.report);
  EXPECT_EQ(o.report.gpus_after.size(), 8u);
  EXPECT_EQ(o.slept.count(), 0);
}

TEST(HostCleanerTest, VllmIncident) {
  Outcome o = Clean(Incident(), Vllm());
  EXPECT_EQ(o.log, "scan stop+term smi+shm");  // 3 round trips, one read after the wave
  EXPECT_EQ(o.report.status, HostStatus::kClean) << HostMessage(o.report);
  EXPECT_EQ(o.report.units_stopped, std::vector<std::string>{"vllm.service"});
  EXPECT_EQ(o.report.term_sent, 8);
  EXPECT_EQ(o.report.kill_sent, 0);
  EXPECT_EQ(CountFate(o.report, HolderFate::kTerminated), 8);
  EXPECT_EQ(o.report.shm_removed.size(), 2u);
  EXPECT_EQ(o.report.rounds, 1);
  // Only the quick settle after the TERM wave, never the full 2 s.
  EXPECT_LE(o.slept.count(), 500);
}

TEST(HostCleanerTest, IgnoredTermGetsKill) {
  FakeHost host;
  for (int i = 0; i < 4; ++i) host.procs.push_back(Worker(300 + i, i, /*ppid=*/1));  // orphans
  host.procs[1].behavior = Behavior::kIgnoresTerm;
  host.procs[3].behavior = Behavior::kIgnoresTerm;
  Outcome o = Clean(host, DefaultPlaybook());
  // The TERM left two: the re-scan that rode on it did not run. Orphans: the
  // quick re-scan on the KILL wave is the verify.
  EXPECT_EQ(o.log, "scan term kill+smi+shm");
  EXPECT_EQ(o.report.status, HostStatus::kClean);
  EXPECT_EQ(o.report.term_sent, 4);
  EXPECT_EQ(o.report.kill_sent, 2);
  EXPECT_EQ(CountFate(o.report, HolderFate::kKilled), 2);
  EXPECT_EQ(CountFate(o.report, HolderFate::kTerminated), 2);
}

// Without a /dev/shm step the quick re-scan after the wave is the verify
// too: one nvidia-smi read, not a second one right after it.
TEST(HostCleanerTest, QuickRescanIsTheVerifyWithoutShm) {
  Playbook no_shm;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, term, kill, rescan, verify]\n", "p", &no_shm).ok());
  FakeHost host;
  for (int i = 0; i < 4; ++i) host.procs.push_back(Worker(300 + i, i, /*ppid=*/1));
  Outcome o = Clean(host, no_shm);
  EXPECT_EQ(o.log, "scan term+smi");
  EXPECT_EQ(o.report.status, HostStatus::kClean) << HostMessage(o.report);
  EXPECT_EQ(o.report.gpus_after.size(), 8u);
  EXPECT_EQ(o.report.term_sent, 4);
}

// A live parent and no longer settle: the first re-scan reads the device
// files, and the clean and a quick verify ride along in the order the plan
// lists them. The re-scan found the host settled, so it is the verify and
// the quick read after the clean is the host's last reading.
TEST(HostCleanerTest, FullFirstRescanCarriesTheCleanThenTheVerify) {
  Playbook p = DefaultPlaybook();
  p.settle = p.settle_if_clean;
  p.respawn_wait = p.settle_if_clean;
  FakeHost host;
  for (int i = 0; i < 2; ++i) host.procs.push_back(Worker(300 + i, i, /*ppid=*/150));
  host.shm = {"nccl-AbC123"};
  Outcome o = Clean(host, p);
  EXPECT_EQ(o.log, "scan term scan+shm+smi");
  EXPECT_EQ(o.report.status, HostStatus::kClean) << HostMessage(o.report);
  EXPECT_EQ(o.report.shm_removed, std::vector<std::string>{"nccl-AbC123"});
  EXPECT_EQ(o.report.gpus_after.size(), 8u);
}

// A quick re-scan that finds a newcomer on a GPU: the clean that rode along
// ran (its removals are reported) but does not count, and the verify the
// plan still owes comes with the clean after the next wave.
TEST(HostCleanerTest, ACleanOnARescanThatFindsAHolderRunsAgainLater) {
  FakeHost host;
  host.procs.push_back(Worker(300, 0, /*ppid=*/1));
  host.respawns.push_back(Worker(400, 5, /*ppid=*/1));
  host.shm = {"nccl-AbC123"};
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term+smi+shm scan term+smi+shm");
  EXPECT_EQ(o.report.status, HostStatus::kClean) << HostMessage(o.report);
  EXPECT_EQ(o.report.shm_removed, std::vector<std::string>{"nccl-AbC123"});
  EXPECT_EQ(o.report.rounds, 2);
}

TEST(HostCleanerTest, UnkillableIsNamedNotRetried) {
  FakeHost host;
  host.procs.push_back(Worker(300, 2));
  host.procs[0].behavior = Behavior::kUnkillable;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term kill scan scan+shm");  // the settle carries the clean
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  ASSERT_EQ(o.report.holders.size(), 1u);
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kUnkillable);
  EXPECT_EQ(o.report.holders[0].state, 'D');
}

// A holder of /dev/nvidiactl alone that survives SIGKILL: every GPU reads
// clean, and the host is still not.
TEST(HostCleanerTest, UnkillableControlOnlyHolderLeavesTheHostDirty) {
  FakeHost host;
  FakeProc ctl = Worker(300, 0);
  ctl.gpus.clear();
  ctl.mib = 0;
  ctl.ctl_only = true;
  ctl.behavior = Behavior::kUnkillable;
  host.procs.push_back(ctl);
  Outcome o = Clean(host, DefaultPlaybook());
  ASSERT_EQ(o.report.holders.size(), 1u);
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kUnkillable);
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(HostMessage(o.report), "unkillable holder left: pid 300 (VLLM::Worker_TP) in state D");
}

// Ctrl-C during the TERM wave (one worker ignores it, so a KILL is due):
// the wave finishes, nothing after it runs, and the host says it was
// interrupted.
TEST(HostCleanerTest, CtrlCStopsTheLadderAtTheNextStepBoundary) {
  FakeClock clock;
  FakeHost orphans;
  for (int i = 0; i < 8; ++i) orphans.procs.push_back(Worker(300 + i, i, /*ppid=*/1));
  orphans.procs[3].behavior = Behavior::kIgnoresTerm;
  FakeSteps steps(std::move(orphans), &clock);
  Host h;
  h.name = "gpu01";
  h.expected_gpus = 8;
  const Playbook& playbook = DefaultPlaybook();
  std::atomic<bool> stop{false};
  HostJob job;
  job.host = &h;
  job.playbook = &playbook;
  job.clock = &clock;
  job.stop_requested = &stop;
  job.on_step = [&stop](const std::string& step) {
    if (step.rfind("term", 0) == 0) stop.store(true);
  };
  HostReport report = CleanHostWith(steps, job);
  EXPECT_EQ(steps.Log(), "scan term");
  EXPECT_EQ(report.status, HostStatus::kFailed);
  EXPECT_EQ(report.error_kind, ErrorKind::kInterrupted);
  EXPECT_EQ(HostMessage(report),
            "interrupted before kill+rescan+clean_shm: the ladder stopped at this step "
            "boundary");
  EXPECT_EQ(report.term_sent, 8);
}

TEST(HostCleanerTest, ProtectedDaemonsAreNeverTargets) {
  FakeHost host;
  FakeProc daemon;
  daemon.pid = 50;
  daemon.comm = "nvidia-persiste";
  daemon.exe = "/usr/bin/nvidia-persistenced";
  daemon.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  FakeProc fake = Worker(60, 1, /*ppid=*/1);
  fake.comm = "nvidia-persiste";  // a user process wearing the daemon's name
  host.procs = {daemon, fake};
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term+smi+shm");
  EXPECT_EQ(o.report.status, HostStatus::kClean);
  EXPECT_EQ(o.report.term_sent, 1);
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kProtected);
  EXPECT_EQ(o.report.holders[0].protected_by, "nvidia-persistenced");
  EXPECT_EQ(o.report.holders[1].fate, HolderFate::kTerminated);
}

// A user's copy of python named like a daemon is a job; a real daemon that
// holds memory leaves the GPU busy and named, never silently accepted.
TEST(HostCleanerTest, ImpostorsAreJobsAndBusyDaemonsAreNamed) {
  FakeHost host;
  FakeProc impostor = Worker(60, 1);
  impostor.comm = "nvidia-persiste";
  impostor.exe = "/home/gpuops/bin/nvidia-persistenced";
  FakeProc daemon;
  daemon.pid = 50;
  daemon.comm = "nv-hostengine";
  daemon.exe = "/usr/bin/nv-hostengine";
  daemon.gpus = {2};
  daemon.mib = 512;
  host.procs = {daemon, impostor};
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.term_sent, 1);
  EXPECT_EQ(o.report.holders[1].fate, HolderFate::kTerminated);
  EXPECT_EQ(o.report.holders[1].named_like, "nvidia-persistenced");
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kProtected);
  EXPECT_EQ(o.report.gpus_after[2].state, GpuState::kBusy);
  EXPECT_EQ(o.report.gpus_after[2].detail,
            "512 MiB used, held only by protected nv-hostengine (50)");
}

// Seen from a PID namespace that is not the host's, nvidia-smi's PIDs name
// other processes: nothing is signalled, dry run or not.
TEST(HostCleanerTest, ForeignPidNamespaceSignalsNothing) {
  FakeHost host = Incident();
  host.pid_namespace = "pid:[4026532999]";
  for (bool dry_run : {false, true}) {
    Outcome o = Clean(host, Vllm(), dry_run);
    EXPECT_EQ(o.log, dry_run ? "shm?+scan" : "scan") << dry_run;
    EXPECT_EQ(o.report.status, HostStatus::kFailed);
    EXPECT_EQ(o.report.term_sent + o.report.kill_sent, 0);
    EXPECT_NE(HostMessage(o.report).find("does not see the host's PID namespace "
                                         "(pid:[4026532999])"),
              std::string::npos)
        << HostMessage(o.report);
  }
}

// Two jobs share the host; the run is scoped to the second one's GPUs.
TEST(HostCleanerTest, ScopedRunNeverTouchesTheCoTenant) {
  FakeHost host;
  for (int i = 0; i < 4; ++i) host.procs.push_back(Worker(300 + i, i));
  for (int i = 4; i < 8; ++i) host.procs.push_back(Worker(300 + i, i));
  Scope scope;
  scope.gpus = std::vector<int>{4, 5, 6, 7};
  scope.source = "flags";
  Outcome o = Clean(host, DefaultPlaybook(), false, scope);
  EXPECT_EQ(o.report.status, HostStatus::kClean) << HostMessage(o.report);
  EXPECT_EQ(o.report.term_sent, 4);
  EXPECT_EQ(CountFate(o.report, HolderFate::kOutOfScope), 4);
  EXPECT_EQ(CountFate(o.report, HolderFate::kTerminated), 4);
  for (const Holder& h : o.report.holders) {
    EXPECT_EQ(h.fate == HolderFate::kOutOfScope, h.pid < 304) << h.pid;
  }
  EXPECT_EQ(o.report.gpus_after[0].state, GpuState::kOutOfScope);
  EXPECT_EQ(o.report.gpus_after[5].state, GpuState::kClean);
}

TEST(HostCleanerTest, GhostMemoryIsNamed) {
  FakeHost host;
  host.ghost_mib[3] = 10151;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan scan shm+smi scan scan");  // the second: with the table
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.gpus_after[3].state, GpuState::kGhost);
  EXPECT_EQ(o.report.term_sent, 0);
}

TEST(HostCleanerTest, GhostUnderDaemonIsNamedAndItsResetBlocked) {
  FakeHost host;
  FakeProc daemon;
  daemon.pid = 50;
  daemon.comm = "nvidia-persiste";
  daemon.exe = "/usr/bin/nvidia-persistenced";
  daemon.gpus = {0, 1, 2, 3, 4, 5, 6, 7};
  host.procs = {daemon};
  host.ghost_mib[2] = 10151;
  host.ghost_mib[4] = 512;
  host.procs[0].gpus = {0, 1, 2, 3, 5, 6, 7};  // GPU 4: nothing holds it
  Playbook reset;
  ASSERT_TRUE(LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/reset.yaml", &reset).ok());
  Outcome o = Clean(host, reset);
  EXPECT_EQ(o.log, "scan scan shm+smi scan scan reset smi scan scan");
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.gpus_after[2].state, GpuState::kGhost);
  EXPECT_EQ(o.report.gpus_after[4].state, GpuState::kGhost);
  // reset.yaml stops a daemon's unit for the reset; this one runs in none.
  // GPU 4's reset was tried: the step's answer comes first.
  EXPECT_EQ(o.report.reset_blocked_by,
            "GPU 2: In use by another client; nvidia-persistenced (pid 50, no unit to stop)");
  EXPECT_TRUE(o.report.reset_units_stopped.empty());
  EXPECT_EQ(o.report.holders[0].fate, HolderFate::kProtected);
  EXPECT_EQ(o.report.term_sent + o.report.kill_sent, 0);
}

TEST(HostCleanerTest, StragglerStartsASecondWave) {
  FakeHost host;
  for (int i = 0; i < 8; ++i) host.procs.push_back(Worker(200 + i, i, 150));
  host.respawns.push_back(Worker(400, 5, 150));
  Outcome o = Clean(host, DefaultPlaybook());
  // The supervisor (150) lives on after the second wave: the full settle
  // re-scan looks once more for a later restart before the host is clean.
  EXPECT_EQ(o.log, "scan term scan term scan scan+shm");
  EXPECT_EQ(o.report.status, HostStatus::kClean);
  EXPECT_EQ(o.report.rounds, 2);
  EXPECT_EQ(o.report.term_sent, 9);
  EXPECT_EQ(o.report.respawning_parent, "150");
  EXPECT_EQ(o.report.holders.back().round, 2);
}

TEST(HostCleanerTest, DryRunChangesNothing) {
  Outcome o = Clean(Incident(), Vllm(), /*dry_run=*/true);
  EXPECT_EQ(o.log, "shm?+scan");  // one round trip
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.units_would_stop, std::vector<std::string>{"vllm.service"});
  EXPECT_EQ(o.report.shm_would_remove.size(), 2u);
  EXPECT_EQ(CountFate(o.report, HolderFate::kWouldTerm), 8);
  EXPECT_EQ(o.report.term_sent, 0);
}

TEST(HostCleanerTest, InspectPlaybookOnlyLooks) {
  Playbook inspect;
  ASSERT_TRUE(LoadPlaybookFile(FLEETREAP_SOURCE_DIR "/playbooks/inspect.yaml", &inspect).ok());
  Outcome o = Clean(Incident(), inspect);
  EXPECT_EQ(o.log, "scan");
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(CountFate(o.report, HolderFate::kObserved), 8);
}

TEST(HostCleanerTest, LostGpuIsNamedOthersStillVerified) {
  FakeHost host;
  host.lost_gpu = 6;
  host.nvidia_smi_exit = 15;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kDirty) << HostMessage(o.report);
  ASSERT_EQ(o.report.gpus_after.size(), 8u);
  for (const GpuReading& gpu : o.report.gpus_after) {
    EXPECT_EQ(gpu.state, gpu.index == 6 ? GpuState::kLost : GpuState::kClean) << gpu.index;
  }
  EXPECT_NE(o.report.nvidia_smi_error.find("GPU is lost"), std::string::npos);
}

TEST(HostCleanerTest, LostGpuStopsTheLadderBeforeAnySignal) {
  FakeHost host = Incident();
  host.lost_gpu = 6;
  for (bool dry_run : {false, true}) {
    Outcome o = Clean(host, Vllm(), dry_run);
    EXPECT_EQ(o.log, dry_run ? "shm?+scan" : "scan") << dry_run;
    EXPECT_EQ(o.report.status, HostStatus::kDirty) << HostMessage(o.report);
    EXPECT_EQ(o.report.term_sent + o.report.kill_sent, 0);
    EXPECT_EQ(CountFate(o.report, HolderFate::kObserved), 8);
    EXPECT_NE(HostMessage(o.report).find("nothing signalled"), std::string::npos);
  }
}

TEST(HostCleanerTest, RefusedKillFailsTheHostWithoutCallingItUnkillable) {
  FakeHost host;
  host.procs.push_back(Worker(300, 0));
  host.procs.push_back(Worker(301, 1));
  host.procs[1].foreign = true;
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.log, "scan term scan scan+shm");
  EXPECT_EQ(o.report.status, HostStatus::kFailed);
  EXPECT_EQ(o.report.error_kind, ErrorKind::kCommandFailed);
  EXPECT_EQ(HostMessage(o.report),
            "not permitted to signal 301 (root): run with --become or as root");
  EXPECT_EQ(o.report.term_sent, 1);
  EXPECT_EQ(CountFate(o.report, HolderFate::kUnkillable), 0);
}

TEST(HostCleanerTest, LadderThatNeverConvergesSaysSo) {
  FakeHost host;
  FakeProc hidden = Worker(200, 0, /*ppid=*/1);
  hidden.behavior = Behavior::kHidesFromSignal;
  host.procs.push_back(hidden);
  Outcome o = Clean(host, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kDirty);
  EXPECT_EQ(o.report.error_kind, ErrorKind::kNone);
  EXPECT_EQ(HostMessage(o.report), "the escalation did not converge after 64 steps");
  EXPECT_EQ(o.report.timings.size(), 64u);
}

TEST(HostCleanerTest, Failures) {
  FakeHost sudo;
  sudo.sudo_refuses = true;
  Outcome o = Clean(sudo, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kFailed);
  EXPECT_EQ(o.report.error_kind, ErrorKind::kSudo);
  EXPECT_EQ(HostMessage(o.report), "sudo: a password is required");

  FakeHost driver;
  driver.nvidia_smi_exit = 9;
  o = Clean(driver, DefaultPlaybook());
  EXPECT_EQ(o.report.status, HostStatus::kFailed);
  EXPECT_EQ(o.report.error_kind, ErrorKind::kCommandFailed);
  EXPECT_NE(o.report.nvidia_smi_error.find("couldn't communicate with the NVIDIA driver"),
            std::string::npos);
}

}  // namespace
}  // namespace fleetreap
