#include "fleetreap/escalation/host_view.h"

#include <gtest/gtest.h>

#include "fleetreap/remote/systemctl_show.h"

namespace fleetreap {
namespace {

Holder Proc(int pid, uint64_t start, const std::string& exe, std::vector<int> gpus) {
  Holder h;
  h.pid = pid;
  h.ppid = 1;
  h.start_time = start;
  h.exe = exe;
  h.exe_uid = 0;
  h.exe_mode = 0755;
  h.uid = 0;
  h.user = "root";
  h.comm = exe.substr(exe.rfind('/') + 1).substr(0, 15);
  h.gpus = std::move(gpus);
  return h;
}

GpuReading Gpu(int index, GpuState state, const std::string& uuid = "") {
  GpuReading g;
  g.index = index;
  g.uuid = uuid;
  g.used_mib = 4096;
  g.state = state;
  return g;
}

// A shared node: job 41 on GPUs 0-3, job 42 on GPUs 4-7, cleaned with
// --gpus 4-7. Job 41's worker, a process holding only nvidiactl and one
// charged on GPUs 3 and 4 are out of scope; the charged GPU decides, not
// the device files every CUDA process opens.
TEST(HostViewTest, MergeHolderScanOutOfScope) {
  ProtectList protect = ProtectList::Default();
  Scope scope;
  scope.gpus = std::vector<int>{4, 5, 6, 7};
  scope.source = "flags";
  Holder theirs = Proc(10, 100, "/usr/bin/python3", {0, 1, 2, 3, 4, 5, 6, 7});
  theirs.charged_gpus = {2};
  Holder ours = Proc(20, 200, "/usr/bin/python3", {0, 1, 2, 3, 4, 5, 6, 7});
  ours.charged_gpus = {5};
  Holder ctl = Proc(30, 300, "/usr/bin/python3", {});
  Holder both = Proc(40, 400, "/usr/bin/python3", {3, 4});
  Holder daemon = Proc(50, 500, "/usr/bin/nvidia-persistenced", {0, 1, 2, 3, 4, 5, 6, 7});
  std::vector<TrackedHolder> holders;
  MergeHolderScan({theirs, ours, ctl, both, daemon}, protect, scope, 0, &holders);
  ASSERT_EQ(holders.size(), 5u);
  EXPECT_EQ(holders[0].holder.fate, HolderFate::kOutOfScope);
  EXPECT_EQ(holders[0].holder.out_of_scope, "uses GPU 2, outside --gpus 4-7");
  EXPECT_EQ(holders[1].holder.fate, HolderFate::kObserved);
  EXPECT_EQ(holders[2].holder.out_of_scope, "uses no GPU of --gpus 4-7");
  EXPECT_EQ(holders[3].holder.out_of_scope, "uses GPU 3, outside --gpus 4-7");
  EXPECT_EQ(holders[4].holder.fate, HolderFate::kProtected);
  // Out of scope stays out of scope when it is gone: never "terminated".
  MergeHolderScan({ours}, protect, scope, 1, &holders);
  EXPECT_EQ(holders[0].holder.fate, HolderFate::kOutOfScope);

  Scope job;
  ASSERT_TRUE(SlurmScope("42", "", &job).ok());
  Holder in_job = Proc(60, 600, "/usr/bin/python3", {4});
  in_job.owner = OwnerFromCgroup("/system.slice/slurmstepd.scope/job_42/step_0/user/task_0");
  Holder other_job = Proc(61, 610, "/usr/bin/python3", {0});
  other_job.owner = OwnerFromCgroup("/system.slice/slurmstepd.scope/job_41/step_0/user/task_0");
  std::vector<TrackedHolder> shared;
  MergeHolderScan({in_job, other_job}, protect, job, 0, &shared);
  EXPECT_EQ(shared[0].holder.fate, HolderFate::kObserved);
  EXPECT_EQ(shared[1].holder.out_of_scope, "not in Slurm job 42 (slurm job 41 step 0)");
}

TEST(HostViewTest, UnitsSafeToStop) {
  ProtectList protect = ProtectList::Default();
  Holder daemon = Proc(10, 100, "/usr/bin/nv-hostengine", {0});
  daemon.owner = OwnerFromCgroup("/system.slice/gpu-monitor.service");
  std::vector<TrackedHolder> holders;
  MergeHolderScan({daemon}, protect, Scope(), 0, &holders);
  std::map<std::string, UnitProperties> props = ParseSystemctlShow(
      "Id=vllm.service\nRestart=always\nControlGroup=/system.slice/vllm.service\nMainPID=77\n\n"
      "Id=gpu-monitor.service\nRestart=no\nControlGroup=/system.slice/gpu-monitor.service\n"
      "MainPID=0\n\nId=ops-shell.service\nControlGroup=/system.slice/ops-shell.service\n");
  ASSERT_EQ(props.size(), 3u);
  EXPECT_EQ(props["vllm.service"].restart, "always");
  EXPECT_EQ(props["vllm.service"].main_pid, 77);
  std::vector<std::string> skipped;
  std::vector<std::string> safe = UnitsSafeToStop(
      {"vllm.service", "gpu-monitor.service", "ops-shell.service", "nvidia-persistenced.service"},
      props, "/system.slice/ops-shell.service", holders, Scope(), &skipped);
  EXPECT_EQ(safe, std::vector<std::string>{"vllm.service"});
  EXPECT_EQ(skipped, (std::vector<std::string>{
                         "gpu-monitor.service: it runs protected nv-hostengine (pid 10)",
                         "ops-shell.service: fleetreap's own session runs in it",
                         "nvidia-persistenced.service: a protected daemon's unit "
                         "(nvidia-persistenced)"}));
}

// Two vLLM units on one host, cleaned with --gpus 4-7: stopping vllm-a
// would kill its workers on GPUs 0-3, so only vllm-b is stopped.
TEST(HostViewTest, UnitsSafeToStopUnderAScope) {
  Scope scope;
  scope.gpus = std::vector<int>{4, 5, 6, 7};
  scope.source = "flags";
  Holder a = Proc(10, 100, "/usr/bin/python3", {0});
  a.charged_gpus = {0};
  a.owner = OwnerFromCgroup("/system.slice/vllm-a.service");
  Holder b = Proc(20, 200, "/usr/bin/python3", {4});
  b.charged_gpus = {4};
  b.owner = OwnerFromCgroup("/system.slice/vllm-b.service");
  std::vector<TrackedHolder> holders;
  MergeHolderScan({a, b}, ProtectList::Default(), scope, 0, &holders);
  std::map<std::string, UnitProperties> props = ParseSystemctlShow(
      "Id=vllm-a.service\nControlGroup=/system.slice/vllm-a.service\nMainPID=9\n\n"
      "Id=vllm-b.service\nControlGroup=/system.slice/vllm-b.service\nMainPID=19\n\n"
      "Id=idle.service\nControlGroup=/system.slice/idle.service\nMainPID=29\n");
  std::vector<std::string> skipped;
  std::vector<std::string> safe =
      UnitsSafeToStop({"vllm-a.service", "vllm-b.service", "idle.service", "gone.service"}, props,
                      "", holders, scope, &skipped);
  EXPECT_EQ(safe, std::vector<std::string>{"vllm-b.service"});
  EXPECT_EQ(skipped,
            (std::vector<std::string>{
                "vllm-a.service: it runs out-of-scope python3 (pid 10): uses GPU 0, outside "
                "--gpus 4-7",
                "idle.service: no holder in it is in scope",
                "gone.service: its cgroup is unknown, and a scope is set"}));
  // --cgroup: only units inside it.
  Scope cgroup;
  cgroup.cgroup = "/system.slice/vllm-b.service";
  std::vector<TrackedHolder> tracked;
  MergeHolderScan({a, b}, ProtectList::Default(), cgroup, 0, &tracked);
  skipped.clear();
  safe =
      UnitsSafeToStop({"vllm-a.service", "vllm-b.service"}, props, "", tracked, cgroup, &skipped);
  EXPECT_EQ(safe, std::vector<std::string>{"vllm-b.service"});
  EXPECT_EQ(skipped, std::vector<std::string>{
                         "vllm-a.service: its cgroup /system.slice/vllm-a.service is not inside "
                         "--cgroup /system.slice/vllm-b.service"});
}

// A protected daemon that execs something else is judged again.
TEST(HostViewTest, AProtectedHolderThatExecsIsJudgedAgain) {
  ProtectList protect = ProtectList::Default();
  std::vector<TrackedHolder> holders;
  Holder daemon = Proc(10, 100, "/usr/bin/nv-hostengine", {0});
  MergeHolderScan({daemon}, protect, Scope(), 0, &holders);
  ASSERT_EQ(holders[0].holder.fate, HolderFate::kProtected);
  Holder same = daemon;
  MergeHolderScan({same}, protect, Scope(), 0, &holders);
  EXPECT_EQ(holders[0].holder.fate, HolderFate::kProtected);
  Holder exec = Proc(10, 100, "/usr/bin/python3.11", {0});
  MergeHolderScan({exec}, protect, Scope(), 0, &holders);
  ASSERT_EQ(holders.size(), 1u);
  EXPECT_EQ(holders[0].holder.fate, HolderFate::kObserved);
  EXPECT_EQ(holders[0].holder.protected_by, "");
}

TEST(HostViewTest, MergeHolderScan) {
  ProtectList protect = ProtectList::Default();
  std::vector<TrackedHolder> holders;
  Holder daemon = Proc(10, 100, "/usr/bin/nvidia-persistenced", {0, 1});
  Holder worker = Proc(20, 200, "/usr/bin/python3", {0});
  MergeHolderScan({daemon, worker}, protect, Scope(), 0, &holders);
  ASSERT_EQ(holders.size(), 2u);
  EXPECT_EQ(holders[0].holder.fate, HolderFate::kProtected);
  EXPECT_EQ(holders[0].holder.protected_by, "nvidia-persistenced");
  EXPECT_EQ(holders[1].holder.fate, HolderFate::kObserved);
  EXPECT_EQ(holders[1].holder.round, 1);

  // The worker got TERM and left; PID 20 came back as another process; a
  // straggler appeared in the second wave.
  holders[1].term_sent = true;
  Holder reused = Proc(20, 999, "/usr/bin/bash", {1});
  Holder straggler = Proc(30, 300, "/usr/bin/python3", {5});
  MergeHolderScan({daemon, reused, straggler}, protect, Scope(), 1, &holders);
  ASSERT_EQ(holders.size(), 4u);
  EXPECT_TRUE(holders[0].present);
  EXPECT_EQ(holders[0].holder.fate, HolderFate::kProtected);
  EXPECT_FALSE(holders[1].present);
  EXPECT_EQ(holders[1].holder.fate, HolderFate::kTerminated);
  EXPECT_EQ(holders[2].holder.start_time, 999u);
  EXPECT_EQ(holders[2].holder.round, 2);
  EXPECT_EQ(holders[3].holder.round, 2);

  // A protected daemon that is gone stays protected in the report.
  MergeHolderScan({}, protect, Scope(), 1, &holders);
  EXPECT_EQ(holders[0].holder.fate, HolderFate::kProtected);
  EXPECT_EQ(holders[3].holder.fate, HolderFate::kGone);
}

TEST(HostViewTest, NumberTheLostGpu) {
  struct Row {
    std::vector<int> indexes;  // readings with an index
    int lost;                  // unnumbered lost readings
    int expected;
    int want;  // index the (first) lost reading ends with
  };
  const Row rows[] = {
      {{0, 1, 2, 3, 4, 5, 7}, 1, 8, 6},
      {{0, 1, 2, 3, 4, 5}, 1, 8, -1},  // two absent: cannot tell
      {{0, 1, 2, 3, 4, 5}, 2, 8, -1},  // two lost: cannot tell
      {{0, 1, 2, 3, 4, 5, 6, 7}, 1, 8, -1},
      {{0, 1}, 1, 0, -1},  // no count to go by
  };
  for (const Row& row : rows) {
    std::vector<GpuReading> gpus;
    for (int i : row.indexes) gpus.push_back(Gpu(i, GpuState::kUnknown));
    for (int i = 0; i < row.lost; ++i) gpus.push_back(Gpu(-1, GpuState::kLost));
    NumberTheLostGpu(row.expected, &gpus);
    EXPECT_EQ(gpus[row.indexes.size()].index, row.want) << row.expected;
  }
}

TEST(HostViewTest, GhostsUnderProtectedDaemons) {
  TrackedHolder daemon;
  daemon.holder = Proc(10, 100, "/usr/bin/nvidia-persistenced", {0, 1, 2});
  daemon.holder.fate = HolderFate::kProtected;
  TrackedHolder worker;
  worker.holder = Proc(20, 200, "/usr/bin/python3", {1});
  std::vector<GpuReading> gpus = {Gpu(0, GpuState::kBusy, "GPU-0"),
                                  Gpu(1, GpuState::kBusy, "GPU-1"),
                                  Gpu(2, GpuState::kBusy, "GPU-2")};
  std::vector<int> suspects = GpusHeldOnlyByProtected({daemon, worker}, gpus);
  EXPECT_EQ(suspects, (std::vector<int>{0, 2}));
  ComputeApp app;
  app.gpu_uuid = "GPU-2";
  MarkGhostsWithoutApps(suspects, {app}, &gpus);
  EXPECT_EQ(gpus[0].state, GpuState::kGhost);
  EXPECT_EQ(gpus[1].state, GpuState::kBusy);
  EXPECT_EQ(gpus[2].state, GpuState::kBusy);  // a process the scan missed uses it
}

}  // namespace
}  // namespace fleetreap
