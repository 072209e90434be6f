// JudgeHost: the status and typed findings from a view and the runner's
// facts, one row per story the runner used to tell itself.
#include "fleetreap/escalation/verdict.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

namespace fk = finding_kind;

GpuReading Gpu(int index, int64_t used_mib, GpuState state) {
  GpuReading gpu;
  gpu.index = index;
  gpu.used_mib = used_mib;
  gpu.state = state;
  return gpu;
}

TrackedHolder Tracked(int pid, int ppid, HolderFate fate, bool present) {
  TrackedHolder t;
  t.holder.pid = pid;
  t.holder.ppid = ppid;
  t.holder.comm = "python3";
  t.holder.state = 'D';
  t.holder.fate = fate;
  t.present = present;
  return t;
}

struct Judged {
  Playbook playbook;
  VerdictFacts facts;
  HostView view;
  Judged() {
    facts.playbook = &playbook;
    facts.gpus_after = {Gpu(0, 0, GpuState::kClean), Gpu(1, 0, GpuState::kClean)};
  }
  HostVerdict Judge() const { return JudgeHost(view, History(), facts); }
};

const HostFinding* Find(const HostVerdict& verdict, const std::string& kind) {
  for (const HostFinding& finding : verdict.findings) {
    if (finding.kind == kind) return &finding;
  }
  return nullptr;
}

std::string ReasonKind(const HostVerdict& verdict) {
  for (const HostFinding& finding : verdict.findings) {
    if (finding.reason) return finding.kind;
  }
  return "";
}

TEST(VerdictTest, EmptyGpusAndNothingLeftIsClean) {
  Judged j;
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kClean);
  EXPECT_TRUE(verdict.findings.empty());
}

TEST(VerdictTest, BusyGpusAreDirtyWithTheirMemory) {
  Judged j;
  j.facts.gpus_after[1] = Gpu(1, 4000, GpuState::kBusy);
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kDirty);
  const HostFinding* dirty = Find(verdict, fk::kGpusNotEmpty);
  ASSERT_NE(dirty, nullptr);
  EXPECT_EQ(dirty->gpus, std::vector<int>{1});
  EXPECT_EQ(dirty->mib, 4000);
  EXPECT_EQ(ReasonKind(verdict), "");
}

TEST(VerdictTest, AnUnkillableHolderOnEmptyGpusIsTheReason) {
  Judged j;
  j.view.holders = {Tracked(300, 1, HolderFate::kUnkillable, true)};
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kDirty);
  const HostFinding* unkillable = Find(verdict, fk::kUnkillableHolder);
  ASSERT_NE(unkillable, nullptr);
  EXPECT_EQ(unkillable->pids, std::vector<int>{300});
  EXPECT_EQ(unkillable->detail, "D");
  EXPECT_TRUE(unkillable->reason);
}

TEST(VerdictTest, BlindSpotsAreNotesAndTheWalkIsTheReason) {
  Judged j;
  j.view.holder_walk_failed = true;
  j.view.control_only_left_out = 70;
  j.view.children_unlisted = {7, 8};
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kDirty);
  ASSERT_GE(verdict.findings.size(), 3u);
  EXPECT_EQ(verdict.findings[0].kind, fk::kHolderWalkFailed);
  EXPECT_EQ(verdict.findings[1].kind, fk::kControlOnlyLeftOut);
  EXPECT_EQ(verdict.findings[1].count, 70);
  EXPECT_EQ(verdict.findings[2].kind, fk::kRespawnWatchBlind);
  EXPECT_EQ(verdict.findings[2].pids, (std::vector<int>{7, 8}));
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(verdict.findings[i].note);
  EXPECT_EQ(ReasonKind(verdict), fk::kHolderWalkFailed);
}

TEST(VerdictTest, ANewcomerWithoutGpuNamesItsParent) {
  Judged j;
  j.view.holders = {Tracked(10, 500, HolderFate::kTerminated, false)};
  j.view.parents = {{500, 0, 0, "supervisord"}};
  j.view.newcomers = {{500, 11, 99, "python3"}};
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kDirty);
  const HostFinding* newcomer = Find(verdict, fk::kNewcomerWithoutGpu);
  ASSERT_NE(newcomer, nullptr);
  EXPECT_EQ(newcomer->pids, (std::vector<int>{11, 500}));
  EXPECT_EQ(newcomer->names, (std::vector<std::string>{"python3", "supervisord"}));
  EXPECT_TRUE(newcomer->reason);
  EXPECT_EQ(verdict.respawning_parent, "500 (supervisord)");
}

// A restarter that started a signalled holder again and lives on: the GPUs
// read empty, yet it can start the job again, so the host is not ready and
// the restarter is the reason; one that restarted nothing is only a note.
TEST(VerdictTest, ARestarterThatRestartedAndLivesLeavesTheHostNotReady) {
  Judged j;
  TrackedHolder first = Tracked(10, 500, HolderFate::kTerminated, false);
  first.term_sent = true;
  TrackedHolder again = Tracked(11, 500, HolderFate::kTerminated, false);
  again.holder.round = 2;
  again.term_sent = true;
  j.view.holders = {first, again};
  j.view.parents = {{500, 0, 0, "supervisord"}};
  Holder supervisor;
  supervisor.pid = 500;
  supervisor.comm = "supervisord";
  j.view.restarters = {supervisor};
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kNotReady);
  EXPECT_EQ(ReasonKind(verdict), fk::kRestarterAlive);
  const HostFinding* alive = Find(verdict, fk::kRestarterAlive);
  ASSERT_NE(alive, nullptr);
  EXPECT_EQ(alive->detail, "kill 500");

  j.view.holders = {first};  // watched, restarted nothing: named, clean
  verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kClean);
  EXPECT_EQ(ReasonKind(verdict), "");
  ASSERT_NE(Find(verdict, fk::kRestarterAlive), nullptr);
}

TEST(VerdictTest, ARefusedSignalFailsTheHost) {
  Judged j;
  j.facts.refused = {"7 (bob)"};
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kFailed);
  EXPECT_EQ(verdict.error_kind, ErrorKind::kCommandFailed);
  EXPECT_EQ(ReasonKind(verdict), fk::kSignalRefused);
}

TEST(VerdictTest, TheStepCapOutranksEveryOtherReason) {
  Judged j;
  j.facts.did_not_converge = true;
  j.facts.stop_ladder = true;
  j.view.newcomers = {{500, 11, 99, "python3"}};
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kDirty);
  EXPECT_EQ(ReasonKind(verdict), fk::kDidNotConverge);
  EXPECT_EQ(Find(verdict, fk::kDidNotConverge)->count, Escalation::kMaxSteps);
  EXPECT_FALSE(Find(verdict, fk::kDriverUnusable)->reason);
}

TEST(VerdictTest, AResetUnitNotBackKeepsTheHostDirty) {
  Judged j;
  j.facts.reset_units_stopped = {"nvidia-persistenced.service", "dcgm.service"};
  j.facts.reset_units_started = {"dcgm.service"};
  HostVerdict verdict = j.Judge();
  EXPECT_EQ(verdict.status, HostStatus::kDirty);
  EXPECT_EQ(Find(verdict, fk::kResetUnitNotRestarted)->units,
            std::vector<std::string>{"nvidia-persistenced.service"});
}

TEST(VerdictTest, ADryRunPlansTheFatesOfPresentHolders) {
  Judged j;
  j.facts.dry_run = true;
  j.view.holders = {Tracked(10, 1, HolderFate::kObserved, true)};
  HostVerdict verdict = j.Judge();
  ASSERT_EQ(verdict.holders.size(), 1u);
  EXPECT_EQ(verdict.holders[0].fate, PlannedFate(j.playbook, verdict.holders[0]));
}

}  // namespace
}  // namespace fleetreap
