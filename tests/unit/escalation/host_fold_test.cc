// The folds as tables of model values: what a snapshot does to the view and
// which follow-ups it calls for, and what a signal reply does to a holder.
#include "fleetreap/escalation/host_fold.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/escalation/host_view.h"

namespace fleetreap {
namespace {

GpuReading Gpu(int index, int64_t used_mib) {
  GpuReading gpu;
  gpu.index = index;
  gpu.uuid = "GPU-" + std::to_string(index);
  gpu.used_mib = used_mib;
  return gpu;
}

Holder Worker(int pid, int minor) {
  Holder h;
  h.pid = pid;
  h.start_time = 1000 + pid;
  h.comm = "python3";
  h.exe = "/usr/bin/python3";
  h.gpus = {minor};
  return h;
}

HostSnapshot Full(std::vector<Holder> holders, std::vector<GpuReading> gpus) {
  HostSnapshot snapshot;
  snapshot.holders_scanned = true;
  snapshot.holders = std::move(holders);
  snapshot.gpu_query.gpus = std::move(gpus);
  return snapshot;
}

TEST(HostFoldTest, FoldsHoldersAndClassifiesGpus) {
  FoldContext context;
  context.threshold_mib = 100;
  FoldState state;
  HostView view;
  ScanFold fold =
      FoldSnapshot(Full({Worker(10, 1)}, {Gpu(0, 0), Gpu(1, 4000)}), context, &state, &view);
  ASSERT_TRUE(fold.status.ok()) << fold.status.ToString();
  EXPECT_FALSE(fold.stops_ladder);
  EXPECT_FALSE(fold.table_rescan);
  ASSERT_EQ(view.holders.size(), 1u);
  EXPECT_EQ(view.holders[0].holder.round, 1);
  ASSERT_EQ(view.gpus.size(), 2u);
  EXPECT_EQ(view.gpus[0].state, GpuState::kClean);
  EXPECT_EQ(view.gpus[1].state, GpuState::kBusy);
}

// Control-only holders the scan left out, and watched parents whose
// children the kernel does not list: the view keeps them (the judge's
// findings say so, verdict_test.cc), and the left-out ones follow the latest
// full scan.
TEST(HostFoldTest, KeepsWhatTheScanCouldNotSee) {
  FoldContext context;
  context.threshold_mib = 100;
  FoldState state;
  HostView view;
  HostSnapshot first = Full({Worker(10, 1)}, {Gpu(0, 0), Gpu(1, 4000)});
  first.control_only_left_out = 2500;
  first.children_unlisted = {7};
  ASSERT_TRUE(FoldSnapshot(first, context, &state, &view).status.ok());
  EXPECT_EQ(view.control_only_left_out, 2500);
  HostSnapshot second = Full({}, {Gpu(0, 0), Gpu(1, 0)});
  second.children_unlisted = {7, 8};
  ASSERT_TRUE(FoldSnapshot(second, context, &state, &view).status.ok());
  EXPECT_EQ(view.control_only_left_out, 0);
  EXPECT_FALSE(view.holder_walk_failed);
  EXPECT_EQ(view.children_unlisted, (std::vector<int>{7, 8}));
}

// A full scan whose holder walk did not run: the view says so, and the next
// full scan that walked clears it.
TEST(HostFoldTest, AWalkThatDidNotRunIsNamed) {
  FoldContext context;
  FoldState state;
  HostView view;
  HostSnapshot blind = Full({}, {Gpu(0, 0), Gpu(1, 0)});
  blind.holder_walk_failed = true;
  blind.control_only_left_out = 70;
  ASSERT_TRUE(FoldSnapshot(blind, context, &state, &view).status.ok());
  EXPECT_TRUE(view.holder_walk_failed);
  EXPECT_EQ(view.control_only_left_out, 70);
  ASSERT_TRUE(FoldSnapshot(Full({}, {Gpu(0, 0), Gpu(1, 0)}), context, &state, &view).status.ok());
  EXPECT_FALSE(view.holder_walk_failed);
  EXPECT_EQ(view.control_only_left_out, 0);
}

TEST(HostFoldTest, FoldsTheReadinessReadingsUnderThePolicy) {
  HostSnapshot snapshot = Full({}, {Gpu(0, 0), Gpu(1, 0)});
  snapshot.gpu_query.gpus[1].bus_id = "00000000:3B:00.0";
  snapshot.health_read = true;
  GpuHealth pending;
  pending.index = 1;
  pending.remapped_rows_pending = true;
  pending.remapped_rows_uncorrectable = 2;
  snapshot.health.gpus = {pending};
  FoldContext context;
  context.threshold_mib = 100;
  FoldState state;
  HostView view;
  ASSERT_TRUE(FoldSnapshot(snapshot, context, &state, &view).status.ok());
  EXPECT_TRUE(view.readiness_checked);
  ASSERT_EQ(view.readiness.size(), 1u);
  EXPECT_EQ(FindingText(view.readiness[0]),
            "GPU 1: row remapping pending (2 rows remapped): reset the GPU before the rollout");

  // "ready: off": nothing checked; a scan without the readings keeps none.
  context.ready.remapped_rows = CheckMode::kWarn;
  HostView warned;
  ASSERT_TRUE(FoldSnapshot(snapshot, context, &state, &warned).status.ok());
  ASSERT_EQ(warned.readiness.size(), 1u);
  EXPECT_EQ(warned.readiness[0].severity, FindingSeverity::kWarn);
  context.ready = ReadyPolicy();
  for (CheckMode* mode :
       {&context.ready.ecc, &context.ready.remapped_rows, &context.ready.retired_pages,
        &context.ready.fabric, &context.ready.persistence, &context.ready.pcie_link,
        &context.ready.xid, &context.ready.gpu_count}) {
    *mode = CheckMode::kOff;
  }
  HostView off;
  ASSERT_TRUE(FoldSnapshot(snapshot, context, &state, &off).status.ok());
  EXPECT_FALSE(off.readiness_checked);
  snapshot.health_read = false;
  HostView unread;
  ASSERT_TRUE(FoldSnapshot(snapshot, FoldContext(), &state, &unread).status.ok());
  EXPECT_FALSE(unread.readiness_checked);
}

TEST(HostFoldTest, MemoryWithNoHolderCallsForTheTable) {
  FoldContext context;
  context.threshold_mib = 100;
  FoldState state;
  HostView view;
  ScanFold fold = FoldSnapshot(Full({}, {Gpu(0, 4000)}), context, &state, &view);
  EXPECT_TRUE(fold.table_rescan);
  EXPECT_EQ(view.gpus[0].state, GpuState::kGhost);
  context.table_scan = true;  // looked with the table already
  EXPECT_FALSE(FoldSnapshot(Full({}, {Gpu(0, 4000)}), context, &state, &view).table_rescan);
}

TEST(HostFoldTest, AnotherPidNamespaceStopsTheLadder) {
  HostSnapshot snapshot = Full({}, {});
  snapshot.sees_host_pid_namespace = false;
  snapshot.pid_namespace = "pid:[4026532999]";
  FoldState state;
  HostView view;
  ScanFold fold = FoldSnapshot(snapshot, FoldContext(), &state, &view);
  EXPECT_TRUE(fold.stops_ladder);
  EXPECT_EQ(fold.status.kind(), ErrorKind::kCommandFailed);
  EXPECT_NE(fold.status.message().find("(pid:[4026532999])"), std::string::npos);
  EXPECT_TRUE(GpusToQueryOneByOne(snapshot, FoldContext(), state).empty());
}

TEST(HostFoldTest, ATimedOutQueryFailsTheScan) {
  HostSnapshot snapshot = Full({}, {});
  snapshot.gpu_query.timed_out = true;
  FoldContext context;
  context.nvidia_smi_timeout = std::chrono::milliseconds(20000);
  FoldState state;
  HostView view;
  ScanFold fold = FoldSnapshot(snapshot, context, &state, &view);
  EXPECT_EQ(fold.status.ToString(), "command_timeout: nvidia-smi did not answer within 20s");
  EXPECT_EQ(state.nvidia_smi_error, "nvidia-smi did not answer within 20s");
}

TEST(HostFoldTest, OnlyALostGpuCallsForEachGpuAlone) {
  HostSnapshot snapshot = Full({}, {});
  snapshot.gpu_query.only_lost_gpus = true;
  snapshot.device_gpus = 3;
  FoldContext context;
  FoldState state;
  EXPECT_EQ(GpusToQueryOneByOne(snapshot, context, state), (std::vector<int>{0, 1, 2}));
  context.expected_gpus = 2;  // the inventory's count wins
  EXPECT_EQ(GpusToQueryOneByOne(snapshot, context, state), (std::vector<int>{0, 1}));
  snapshot.gpu_query.only_lost_gpus = false;
  EXPECT_TRUE(GpusToQueryOneByOne(snapshot, context, state).empty());
}

TEST(HostFoldTest, ChargesAppsToHoldersAndDescribesTheRest) {
  std::vector<Holder> holders = {Worker(300, 3)};
  Holder described = Worker(77, 0);
  described.gpus.clear();
  std::vector<ComputeApp> apps(3);
  apps[0].pid = 300;
  apps[0].gpu_uuid = "GPU-1";
  apps[1].pid = 77;
  apps[1].gpu_bus_id = "0000:12:00.0";
  apps[2].pid = 88;
  std::vector<GpuReading> gpus = {Gpu(1, 0), Gpu(2, 0)};
  gpus[1].bus_id = "00000000:12:00.0";
  ChargeComputeApps(apps, {{77, described}}, gpus, &holders);
  ASSERT_EQ(holders.size(), 3u);
  EXPECT_EQ(holders[0].pid, 77);
  EXPECT_EQ(holders[0].gpus, std::vector<int>{2});
  EXPECT_EQ(holders[1].pid, 88);
  EXPECT_EQ(holders[1].protected_by, "not in this host's /proc");
  EXPECT_EQ(holders[2].gpus, (std::vector<int>{1, 3}));
  EXPECT_EQ(holders[2].charged_gpus, std::vector<int>{1});
}

TEST(HostFoldTest, FoldsASignalReply) {
  struct Row {
    const char* name;
    ActionKind kind;
    SignalReply reply;
    bool present;
    HolderFate fate;
    int ppid;
    int sent;
  };
  const Row rows[] = {
      {"gone after TERM",
       ActionKind::kTerm,
       {5000, {10}, {}, {}, {}, {}, 0},
       false,
       HolderFate::kTerminated,
       1,
       1},
      {"left after TERM, parent alive",
       ActionKind::kTerm,
       {5000, {10}, {}, {}, {{10, 'S'}}, {4}, 0},
       true,
       HolderFate::kObserved,
       4,
       1},
      {"left after TERM, parent died",
       ActionKind::kTerm,
       {5000, {10}, {}, {}, {{10, 'S'}}, {}, 0},
       true,
       HolderFate::kObserved,
       1,
       1},
      {"still there after KILL",
       ActionKind::kKill,
       {5000, {10}, {}, {}, {{10, 'D'}}, {4}, 0},
       true,
       HolderFate::kUnkillable,
       4,
       1},
      {"refused",
       ActionKind::kTerm,
       {5000, {}, {}, {10}, {}, {4}, 0},
       true,
       HolderFate::kObserved,
       4,
       0},
  };
  for (const Row& row : rows) {
    HostView view;
    TrackedHolder t;
    t.holder = Worker(10, 0);
    t.holder.ppid = 4;
    t.holder.user = "vllm";
    view.holders = {t};
    Action wave;
    wave.kind = row.kind;
    wave.targets = {{10, t.holder.start_time}};
    EXPECT_EQ(SignalParents(wave, view), std::vector<int>{4}) << row.name;
    SignalFold fold = FoldSignal(wave, row.reply, &view);
    const TrackedHolder& after = view.holders[0];
    EXPECT_EQ(after.present, row.present) << row.name;
    EXPECT_EQ(after.holder.fate, row.fate) << row.name;
    EXPECT_EQ(after.holder.ppid, row.ppid) << row.name;
    EXPECT_EQ(fold.sent, row.sent) << row.name;
    EXPECT_EQ(after.signalled_at, row.sent > 0 ? 5000u : 0u) << row.name;
    EXPECT_EQ(fold.refused.size(), row.sent == 0 ? 1u : 0u) << row.name;
  }
}

// A target only nvidia-smi named, reported gone: never a target again
// (unheld), unless it started while the scan that found it ran (the signal
// step drops such a target whatever it holds): then the next scan judges it.
TEST(HostFoldTest, AGoneTargetBornDuringItsScanIsNotUnheld) {
  for (uint64_t scan_start : {0u, 900u, 1010u, 1011u}) {
    HostView view;
    TrackedHolder t;
    t.holder = Worker(10, 0);
    t.holder.start_time = 1010;
    view.holders = {t};
    Action wave;
    wave.kind = ActionKind::kTerm;
    wave.targets = {{10, 1010, /*needs_fd=*/false}};
    SignalReply reply;
    reply.now = 5000;
    reply.gone = {10};
    FoldSignal(wave, reply, &view, scan_start);
    const bool young = scan_start > 0 && scan_start <= 1010;
    EXPECT_EQ(view.holders[0].unheld, !young) << scan_start;
    EXPECT_FALSE(view.holders[0].present) << scan_start;
  }
}

}  // namespace
}  // namespace fleetreap
