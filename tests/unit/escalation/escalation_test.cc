#include "fleetreap/escalation/escalation.h"

#include <gtest/gtest.h>

#include "fleetreap/escalation/reset_plan.h"

namespace fleetreap {
namespace {

TrackedHolder H(int pid, HolderFate fate = HolderFate::kObserved, int round = 1, bool term = false,
                bool kill = false, bool present = true) {
  TrackedHolder t;
  t.holder.pid = pid;
  t.holder.start_time = 1000 + pid;
  t.holder.ppid = 500;
  t.holder.comm = "worker";
  t.holder.gpus = {pid % 8};
  t.holder.fate = fate;
  t.holder.round = round;
  t.term_sent = term;
  t.kill_sent = kill;
  t.present = present;
  return t;
}

// The same holder, signalled, whose parent (500) is alive: a supervisor.
TrackedHolder Supervised(TrackedHolder t) {
  t.signalled_at = 5000;
  return t;
}

// The same holder reparented to init: no parent that could restart it.
TrackedHolder Orphan(TrackedHolder t) {
  t.holder.ppid = 1;
  return t;
}

// The same holder in a unit that systemd restarts (its main process's
// parent is PID 1).
TrackedHolder InRestartingUnit(TrackedHolder t) {
  t.holder.owner.unit = "trainer.service";
  t.holder.owner.unit_restart = "always";
  return t;
}

GpuReading G(int index, GpuState state) {
  GpuReading g;
  g.index = index;
  g.used_mib = state == GpuState::kClean ? 0 : 1000;
  g.state = state;
  return g;
}

// A History by name, for rows that read without counting arguments:
// Did().Inspect().StopUnits().Waves(1).Rescans(1).
struct Did {
  History h;
  Did& Inspect() {
    h.inspected = true;
    return *this;
  }
  Did& StopUnits() {
    h.units_done = true;
    return *this;
  }
  Did& Waves(int n) {
    h.waves = n;
    return *this;
  }
  Did& SignalSinceScan() {
    h.signalled_since_scan = true;
    return *this;
  }
  Did& Rescans(int n) {
    h.rescans_since_signal = n;
    return *this;
  }
  Did& CleanShm() {
    h.shm_done = true;
    return *this;
  }
  Did& Verify() {
    h.verified = true;
    return *this;
  }
  operator History() const { return h; }  // NOLINT: rows convert implicitly
};

std::vector<int> Pids(const std::vector<Target>& targets) {
  std::vector<int> pids;
  for (const Target& t : targets) pids.push_back(t.pid);
  return pids;
}

struct Row {
  const char* name;
  HostView view;
  History history;
  ActionKind kind;
  std::vector<int> pids;  // expected targets
  int wait_ms;
};

TEST(EscalationTest, DefaultLadder) {
  const Playbook& p = DefaultPlaybook();
  const auto kClean = std::vector<GpuReading>{G(0, GpuState::kClean)};
  const auto kBusy = std::vector<GpuReading>{G(0, GpuState::kBusy)};
  const auto kGhost = std::vector<GpuReading>{G(0, GpuState::kGhost)};
  const Row rows[] = {
      {"fresh host: inspect first", {}, History{}, ActionKind::kInspect, {}, 0},
      {"active unit: stop it",
       {{H(10)}, kBusy, {"vllm.service"}},
       Did().Inspect(),
       ActionKind::kStopUnits,
       {},
       30000},
      {"holders: TERM the unprotected ones",
       {{H(10), H(11, HolderFate::kProtected), H(12)}, kBusy, {}},
       Did().Inspect().StopUnits(),
       ActionKind::kTerm,
       {10, 12},
       10000},
      {"TERM ignored: KILL the survivor only",
       {{H(10, HolderFate::kTerminated, 1, true, false, false),
         H(12, HolderFate::kObserved, 1, true)},
        kBusy,
        {}},
       Did().Inspect().StopUnits().Waves(1).SignalSinceScan(),
       ActionKind::kKill,
       {12},
       5000},
      {"wave done, parent alive: quick re-scan at settle_if_clean",
       {{Supervised(H(10, HolderFate::kTerminated, 1, true, false, false))}, kBusy, {}},
       Did().Inspect().StopUnits().Waves(1).SignalSinceScan(),
       ActionKind::kRescan,
       {},
       500},
      {"wave done, orphans gone: nothing can restart them, quick re-scan at once",
       {{Orphan(Supervised(H(10, HolderFate::kTerminated, 1, true, false, false)))}, kBusy, {}},
       Did().Inspect().StopUnits().Waves(1).SignalSinceScan(),
       ActionKind::kRescan,
       {},
       0},
      {"wave done, orphan of a unit with Restart=: quick re-scan at settle_if_clean",
       {{InRestartingUnit(
            Orphan(Supervised(H(10, HolderFate::kTerminated, 1, true, false, false))))},
        kBusy,
        {}},
       Did().Inspect().StopUnits().Waves(1).SignalSinceScan(),
       ActionKind::kRescan,
       {},
       500},
      {"quick re-scan clean, orphans: skip the settle, clean shm",
       {{Orphan(H(10, HolderFate::kTerminated, 1, true, false, false))}, kClean, {}},
       Did().Inspect().StopUnits().Waves(1).Rescans(1),
       ActionKind::kCleanShm,
       {},
       0},
      {"quick re-scan clean, parent alive: full settle re-scan (a late restart)",
       {{Supervised(H(10, HolderFate::kTerminated, 1, true, false, false))}, kClean, {}},
       Did().Inspect().StopUnits().Waves(1).Rescans(1),
       ActionKind::kRescan,
       {},
       2000},
      {"after the full settle, parent alive, nothing restarted: move on",
       {{Supervised(H(10, HolderFate::kTerminated, 1, true, false, false))}, kClean, {}},
       Did().Inspect().StopUnits().Waves(1).Rescans(2),
       ActionKind::kCleanShm,
       {},
       0},
      {"quick re-scan dirty, no holder: full settle re-scan",
       {{H(10, HolderFate::kTerminated, 1, true, false, false)}, kGhost, {}},
       Did().Inspect().StopUnits().Waves(1).Rescans(1),
       ActionKind::kRescan,
       {},
       2000},
      {"straggler found by the re-scan: new TERM wave",
       {{H(10, HolderFate::kTerminated, 1, true, false, false), H(13, HolderFate::kObserved, 2)},
        kBusy,
        {}},
       Did().Inspect().StopUnits().Waves(1).Rescans(1),
       ActionKind::kTerm,
       {13},
       10000},
      {"after the full settle: move on even if dirty",
       {{}, kGhost, {}},
       Did().Inspect().StopUnits().Waves(1).Rescans(2),
       ActionKind::kCleanShm,
       {},
       0},
      {"holder of a wave past max_rounds is not signalled",
       {{H(20, HolderFate::kObserved, 4)}, kBusy, {}},
       Did().Inspect().StopUnits().Waves(3).Rescans(2),
       ActionKind::kCleanShm,
       {},
       0},
      {"unkillable holder is not signalled again",
       {{H(10, HolderFate::kUnkillable, 1, true, true)}, kBusy, {}},
       Did().Inspect().StopUnits().Waves(1).Rescans(2).CleanShm(),
       ActionKind::kVerify,
       {},
       0},
      {"only protected holders: no signal, no re-scan",
       {{H(11, HolderFate::kProtected)}, kClean, {}},
       Did().Inspect().StopUnits(),
       ActionKind::kCleanShm,
       {},
       0},
      {"clean host: shm then verify",
       {{}, kClean, {}},
       Did().Inspect().StopUnits().CleanShm(),
       ActionKind::kVerify,
       {},
       0},
      {"verified: done",
       {{}, kClean, {}},
       Did().Inspect().StopUnits().CleanShm().Verify(),
       ActionKind::kDone,
       {},
       0},
      {"ghost without reset step: done",
       {{}, kGhost, {}},
       Did().Inspect().StopUnits().CleanShm().Verify(),
       ActionKind::kDone,
       {},
       0},
  };
  for (const Row& row : rows) {
    Action action = NextAction(p, row.view, row.history);
    EXPECT_EQ(ActionKindName(action.kind), std::string(ActionKindName(row.kind))) << row.name;
    EXPECT_EQ(Pids(action.targets), row.pids) << row.name;
    EXPECT_EQ(action.wait.count(), row.wait_ms) << row.name;
  }
}

// Under a scope no /dev/shm segment is removed: the first re-scan carries
// no clean_shm, and a clean host goes straight to the verify.
TEST(EscalationTest, ScopedRunLeavesShmAlone) {
  const Playbook& p = DefaultPlaybook();
  HostView view;
  view.gpus = {G(0, GpuState::kClean)};
  view.holders = {H(10, HolderFate::kTerminated, 1, true, false, false)};
  view.scoped = true;
  const History first = Did().Inspect().StopUnits().Waves(1).SignalSinceScan();
  Action rescan = NextAction(p, view, first);
  EXPECT_EQ(rescan.kind, ActionKind::kRescan);
  EXPECT_TRUE(RideAlong(rescan, view, first, p).empty());
  view.holders.clear();
  EXPECT_EQ(NextAction(p, view, Did().Inspect().StopUnits()).kind, ActionKind::kVerify);
  view.scoped = false;
  EXPECT_EQ(NextAction(p, view, Did().Inspect().StopUnits()).kind, ActionKind::kCleanShm);
}

// Under a scope the segments of a holder the run signalled are cleaned, and
// only they: the first re-scan carries a clean_shm limited to them, and a
// clean host gets one; with shm_under_scope none, none.
TEST(EscalationTest, ScopedRunCleansItsHoldersSegments) {
  Playbook p = DefaultPlaybook();
  HostView view;
  view.gpus = {G(0, GpuState::kClean)};
  TrackedHolder ours = H(10, HolderFate::kTerminated, 1, true, false, false);
  ours.holder.uid = 1001;
  ours.holder.shm_files = {{77, 1001}, {78, 0}};  // 78 is root's: not this job's
  TrackedHolder theirs = H(11, HolderFate::kOutOfScope);
  theirs.holder.uid = 1001;
  theirs.holder.shm_files = {{79, 1001}};
  view.holders = {ours, theirs};
  view.scoped = true;
  const History first = Did().Inspect().StopUnits().Waves(1).SignalSinceScan();
  Action rescan = NextAction(p, view, first);
  EXPECT_EQ(rescan.kind, ActionKind::kRescan);
  // A quick re-scan: its GPU read, then the clean, in one round trip; the
  // read is the verify (the removal frees host memory only).
  EXPECT_TRUE(rescan.quick);
  const std::vector<Action> riders = RideAlong(rescan, view, first, p);
  ASSERT_EQ(riders.size(), 1u);
  EXPECT_EQ(riders[0].kind, ActionKind::kCleanShm);
  EXPECT_FALSE(riders[0].shm.all);
  EXPECT_EQ(riders[0].shm.only, (std::vector<ShmFile>{{77, 1001}}));
  Action clean = NextAction(p, view, Did().Inspect().StopUnits().Waves(1).Rescans(1));
  EXPECT_EQ(clean.kind, ActionKind::kCleanShm);
  EXPECT_EQ(clean.shm.only, (std::vector<ShmFile>{{77, 1001}}));
  p.shm_under_scope = ShmUnderScope::kNone;
  EXPECT_TRUE(RideAlong(NextAction(p, view, first), view, first, p).empty());
  EXPECT_EQ(NextAction(p, view, Did().Inspect().StopUnits().Waves(1).Rescans(1)).kind,
            ActionKind::kVerify);
  // Without a scope every unused candidate may go.
  view.scoped = false;
  EXPECT_TRUE(NextAction(p, view, Did().Inspect().StopUnits().Waves(1).Rescans(1)).shm.all);
}

TEST(EscalationTest, NewcomersKeepTheHostUnderWatch) {
  // The supervisor (ppid 500) restarted its killed worker: the new child
  // holds no GPU yet, every GPU reads clean.
  const Playbook& p = DefaultPlaybook();
  TrackedHolder killed = H(10, HolderFate::kKilled, 1, true, true, false);
  killed.signalled_at = 5000;
  ChildProcess child{500, 811, 5100, "python3"};
  HostView view{{killed}, {G(0, GpuState::kClean)}, {}, {child}};
  struct {
    int rescans;
    ActionKind kind;
    int wait_ms;
  } const rows[] = {
      {1, ActionKind::kRescan, 1000},  // settle_if_clean + 500 ms
      {2, ActionKind::kRescan, 2500},  // past the settle, then 1.5 s more...
      {10, ActionKind::kRescan, 28000}, {11, ActionKind::kRescan, 30000},  // up to respawn_wait
      {12, ActionKind::kCleanShm, 0},  // then move on: the host ends dirty
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.rescans);
    Action action = NextAction(p, view, Did().Inspect().StopUnits().Waves(1).Rescans(row.rescans));
    EXPECT_EQ(ActionKindName(action.kind), std::string(ActionKindName(row.kind)));
    EXPECT_EQ(action.wait.count(), row.wait_ms);
  }
  // Once it opens a GPU it is a holder of the next wave: TERM it.
  HostView opened{{killed, H(811, HolderFate::kObserved, 2)}, {G(0, GpuState::kBusy)}, {}, {}};
  Action action = NextAction(p, opened, Did().Inspect().StopUnits().Waves(1).Rescans(3));
  EXPECT_EQ(action.kind, ActionKind::kTerm);
  EXPECT_EQ(Pids(action.targets), std::vector<int>{811});
}

// A signalled holder's parent that lives on, or its unit with Restart= that
// the playbook did not stop, may start it again: the host stays under
// watch until respawn_wait after the last signal; orphans do not.
TEST(EscalationTest, ALiveRestarterIsWatchedUntilRespawnWait) {
  const Playbook& p = DefaultPlaybook();
  HostView view{{Supervised(H(10, HolderFate::kTerminated, 1, true, false, false))},
                {G(0, GpuState::kClean)},
                {}};
  Holder supervisor;
  supervisor.pid = 500;
  supervisor.comm = "supervisord";
  view.restarters = {supervisor};
  struct {
    int rescans;
    ActionKind kind;
    int wait_ms;
  } const rows[] = {
      {2, ActionKind::kRescan, 2500},   {5, ActionKind::kRescan, 8000},
      {10, ActionKind::kRescan, 28000}, {11, ActionKind::kRescan, 30000},
      {12, ActionKind::kCleanShm, 0},
  };
  for (const auto& row : rows) {
    SCOPED_TRACE(row.rescans);
    Action action = NextAction(p, view, Did().Inspect().StopUnits().Waves(1).Rescans(row.rescans));
    EXPECT_EQ(ActionKindName(action.kind), std::string(ActionKindName(row.kind)));
    EXPECT_EQ(action.wait.count(), row.wait_ms);
  }
  // The restarter died: nothing is watched.
  view.restarters.clear();
  EXPECT_EQ(NextAction(p, view, Did().Inspect().StopUnits().Waves(1).Rescans(2)).kind,
            ActionKind::kCleanShm);
  // An orphan whose unit restarts it (RestartSec=5s) is watched too...
  HostView unit{
      {InRestartingUnit(Orphan(Supervised(H(10, HolderFate::kTerminated, 1, true, false, false))))},
      {G(0, GpuState::kClean)},
      {}};
  Action watch = NextAction(p, unit, Did().Inspect().StopUnits().Waves(1).Rescans(1));
  EXPECT_EQ(watch.kind, ActionKind::kRescan);
  EXPECT_EQ(watch.wait.count(), 1000);
  // ...unless the playbook stopped that unit.
  unit.active_units = {"trainer.service"};
  EXPECT_EQ(NextAction(p, unit, Did().Inspect().StopUnits().Waves(1).Rescans(1)).kind,
            ActionKind::kCleanShm);
}

TEST(EscalationTest, WatchedParentsAndNewcomers) {
  TrackedHolder a = H(10, HolderFate::kKilled, 1, true, true, false);
  a.signalled_at = 5000;  // parent 500
  TrackedHolder orphan = H(11, HolderFate::kKilled, 1, true, true, false);
  orphan.holder.ppid = 1;  // init adopts orphans: never watched
  orphan.signalled_at = 5000;
  TrackedHolder never = H(12);  // not signalled: its parent is not watched
  never.holder.ppid = 600;
  TrackedHolder child_of_holder = H(13, HolderFate::kKilled, 1, true, true, false);
  child_of_holder.holder.ppid = 10;  // a holder's own parent is a holder
  child_of_holder.signalled_at = 5000;
  const std::vector<TrackedHolder> holders = {a, orphan, never, child_of_holder};
  EXPECT_EQ(WatchedParents(holders), std::vector<int>{500});

  const std::vector<ChildProcess> children = {
      {500, 20, 4000, "tokenizer"},  // started before the signal: a sibling
      {500, 21, 5000, "python3"},    // started at the signal tick: counts
      {500, 22, 7000, "python3"},   {500, 12, 7000, "worker"},  // a tracked holder, not a newcomer
      {600, 30, 9000, "other"},                                 // parent not watched
  };
  std::vector<int> pids;
  for (const ChildProcess& c : FindNewcomers(children, holders)) pids.push_back(c.pid);
  EXPECT_EQ(pids, (std::vector<int>{21, 22}));

  // The restarted worker opened a GPU: its parent is named, by comm when a
  // scan listed it.
  TrackedHolder again = H(22, HolderFate::kKilled, 2, true, true, false);
  EXPECT_EQ(RespawningParent({a, again}), "500");
  EXPECT_EQ(RespawningParent({a, again}, {{500, 0, 0, "supervisor.py"}}), "500 (supervisor.py)");
}

TEST(EscalationTest, PlaybookVariants) {
  Playbook inspect;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect]\n", "i", &inspect).ok());
  Playbook kill_only;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, kill, verify]\n", "k", &kill_only).ok());
  Playbook reset;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, verify, reset_ghosts]\n", "r", &reset).ok());
  const History inspected = Did().Inspect();
  const History verified = Did().Inspect().StopUnits().CleanShm().Verify();
  HostView busy{{H(10)}, {G(0, GpuState::kBusy)}, {"a.service"}};
  HostView ghost{{}, {G(0, GpuState::kGhost), G(1, GpuState::kClean)}, {}};

  EXPECT_EQ(NextAction(inspect, busy, inspected).kind, ActionKind::kDone);
  Action a = NextAction(kill_only, busy, inspected);
  EXPECT_EQ(a.kind, ActionKind::kKill);
  EXPECT_EQ(Pids(a.targets), std::vector<int>{10});
  a = NextAction(reset, ghost, verified);
  EXPECT_EQ(a.kind, ActionKind::kResetGpus);
  EXPECT_EQ(a.gpus, std::vector<int>{0});
  History after_reset = verified;
  after_reset.reset_done = true;
  after_reset.verified = false;
  EXPECT_EQ(NextAction(reset, ghost, after_reset).kind, ActionKind::kVerify);
  after_reset.verified = true;
  EXPECT_EQ(NextAction(reset, ghost, after_reset).kind, ActionKind::kDone);
}

TEST(EscalationTest, PlannedFate) {
  Playbook kill_only;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, kill]\n", "k", &kill_only).ok());
  Playbook inspect;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect]\n", "i", &inspect).ok());
  Holder plain = H(10).holder;
  Holder guarded = H(11, HolderFate::kProtected).holder;
  EXPECT_EQ(PlannedFate(DefaultPlaybook(), plain), HolderFate::kWouldTerm);
  EXPECT_EQ(PlannedFate(kill_only, plain), HolderFate::kWouldKill);
  EXPECT_EQ(PlannedFate(inspect, plain), HolderFate::kObserved);
  EXPECT_EQ(PlannedFate(DefaultPlaybook(), guarded), HolderFate::kProtected);
}

TEST(EscalationTest, FateAfterExit) {
  EXPECT_EQ(FateAfterExit(H(1)), HolderFate::kGone);
  EXPECT_EQ(FateAfterExit(H(1, HolderFate::kObserved, 1, true)), HolderFate::kTerminated);
  EXPECT_EQ(FateAfterExit(H(1, HolderFate::kObserved, 1, true, true)), HolderFate::kKilled);
}

TEST(EscalationTest, RespawningParent) {
  TrackedHolder first = H(10, HolderFate::kKilled, 1, true, true, false);
  TrackedHolder again = H(13, HolderFate::kObserved, 2);
  TrackedHolder orphan = H(14, HolderFate::kObserved, 2);
  orphan.holder.ppid = 1;
  TrackedHolder parent = H(500, HolderFate::kProtected);
  parent.holder.comm = "supervisord";
  parent.holder.ppid = 1;
  EXPECT_EQ(RespawningParent({first}), "");
  EXPECT_EQ(RespawningParent({first, orphan}), "");
  EXPECT_EQ(RespawningParent({first, again}), "500");
  EXPECT_EQ(RespawningParent({first, again, parent}), "500 (supervisord)");
}

TEST(EscalationTest, ResetBlockers) {
  TrackedHolder daemon = H(812, HolderFate::kProtected);
  daemon.holder.protected_by = "nvidia-persistenced";
  daemon.holder.gpus = {0, 1};
  HostView view{
      {daemon}, {G(0, GpuState::kBusy), G(1, GpuState::kClean), G(2, GpuState::kGhost)}, {}};
  EXPECT_EQ(ResetBlockers(view), "nvidia-persistenced (pid 812)");
  EXPECT_EQ(ResettableGpus(view), std::vector<int>{2});
  view.gpus[0].state = GpuState::kClean;
  EXPECT_EQ(ResetBlockers(view), "");
}

}  // namespace
}  // namespace fleetreap

namespace fleetreap {
namespace {

TEST(EscalationTest, GhostUnderDaemonIsBlockedNotReset) {
  TrackedHolder daemon = H(812, HolderFate::kProtected);
  daemon.holder.protected_by = "nvidia-persistenced";
  daemon.holder.gpus = {2};
  HostView view{{daemon}, {G(2, GpuState::kGhost), G(3, GpuState::kGhost)}, {}};
  EXPECT_EQ(ResettableGpus(view), std::vector<int>{3});
  EXPECT_EQ(ResetBlockers(view), "nvidia-persistenced (pid 812)");
}

}  // namespace
}  // namespace fleetreap
