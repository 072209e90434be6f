// The re-scan that rides on a wave: RideAlong adds it (and the /dev/shm
// clean on it) only where the ladder would come to it at once after the
// wave, and Escalation::StepCounts reads it only where the ladder did.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/escalation/escalation.h"

namespace fleetreap {
namespace {

TrackedHolder Worker(int pid, int ppid) {
  TrackedHolder t;
  t.holder.pid = pid;
  t.holder.start_time = 1000 + pid;
  t.holder.ppid = ppid;
  t.holder.comm = "worker";
  t.holder.gpus = {pid % 8};
  t.holder.round = 1;
  return t;
}

GpuReading Busy(int index) {
  GpuReading g;
  g.index = index;
  g.used_mib = 1000;
  g.state = GpuState::kBusy;
  return g;
}

// The vLLM incident: two workers whose parent (700) is vllm.service's main
// process, the unit active.
HostView Incident() {
  HostView view;
  view.holders = {Worker(10, 700), Worker(11, 700)};
  view.gpus = {Busy(2), Busy(3)};
  view.active_units = {"vllm.service"};
  UnitProperties unit;
  unit.main_pid = 700;
  view.units["vllm.service"] = unit;
  return view;
}

Action Inspect() {
  Action inspect;
  inspect.kind = ActionKind::kInspect;
  return inspect;
}

History Inspected() {
  History h;
  h.inspected = true;
  return h;
}

std::string Kinds(const std::vector<Action>& actions) {
  std::string text;
  for (const Action& a : actions) {
    text += (text.empty() ? "" : "+") + std::string(ActionKindName(a.kind));
    if (a.kind == ActionKind::kRescan && a.quick) text += "(quick)";
  }
  return text;
}

TEST(RideAlongTest, TheStopsEndTheWorkersParent) {
  const Playbook& p = DefaultPlaybook();
  const HostView view = Incident();
  const Action stop = NextAction(p, view, Inspected());
  ASSERT_EQ(stop.kind, ActionKind::kStopUnits);
  EXPECT_EQ(Kinds(RideAlong(stop, view, Inspected(), p)), "term+rescan(quick)+clean_shm");
}

TEST(RideAlongTest, AParentThatMayLiveOnKeepsTheReScanForItsOwnRoundTrip) {
  const Playbook& p = DefaultPlaybook();
  HostView view = Incident();
  view.units["vllm.service"].main_pid = 0;  // not the workers' parent
  EXPECT_EQ(Kinds(RideAlong(NextAction(p, view, Inspected()), view, Inspected(), p)), "term");
  // Without stops, a TERM wave on workers of a live supervisor: alone.
  History stopped = Inspected();
  stopped.units_done = true;
  const Action term = NextAction(p, view, stopped);
  ASSERT_EQ(term.kind, ActionKind::kTerm);
  EXPECT_TRUE(RideAlong(term, view, stopped, p).empty());
  // Orphans: the re-scan and the clean ride.
  for (TrackedHolder& t : view.holders) t.holder.ppid = 1;
  EXPECT_EQ(Kinds(RideAlong(term, view, stopped, p)), "rescan(quick)+clean_shm");
}

TEST(RideAlongTest, ARestartingUnitWaitsForTheSettle) {
  const Playbook& p = DefaultPlaybook();
  HostView view = Incident();
  for (TrackedHolder& t : view.holders) {
    t.holder.owner.unit = "trainer.service";
    t.holder.owner.unit_restart = "always";
  }
  EXPECT_EQ(Kinds(RideAlong(NextAction(p, view, Inspected()), view, Inspected(), p)), "term");
}

TEST(RideAlongTest, UnderAScopeOnlyTheReScanRides) {
  const Playbook& p = DefaultPlaybook();
  HostView view = Incident();
  view.scoped = true;
  EXPECT_EQ(Kinds(RideAlong(NextAction(p, view, Inspected()), view, Inspected(), p)),
            "term+rescan(quick)");
  Playbook no_rescan;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, stop_units, term, kill]\nunits: [vllm*.service]\n",
                            "p", &no_rescan)
                  .ok());
  EXPECT_EQ(
      Kinds(RideAlong(NextAction(no_rescan, view, Inspected()), view, Inspected(), no_rescan)),
      "term");
}

// The runner reads the steps one at a time: the re-scan counts when every
// target is gone, not when the TERM left one (the KILL comes first), and
// the clean after a re-scan left unread does not count either.
TEST(RideAlongTest, TheReScanCountsWhenTheLadderComesToIt) {
  const Playbook& p = DefaultPlaybook();
  HostView view = Incident();
  for (TrackedHolder& t : view.holders) t.holder.ppid = 1;
  view.active_units.clear();
  Escalation e(p, EscalationMode::kRun);
  e.Finished(Inspect(), view);
  Action term = e.Next(view);
  ASSERT_EQ(StepName(term), "term+rescan+clean_shm");
  HostView left = view;
  left.holders[0].term_sent = left.holders[1].term_sent = true;
  left.holders[0].signalled_at = left.holders[1].signalled_at = 5000;
  left.holders[1].present = false;
  e.FinishedStep(term, 0, left);
  EXPECT_FALSE(e.StepCounts(term, 1, left));
  EXPECT_FALSE(e.StepCounts(term, 2, left));
  EXPECT_EQ(e.history().rescans_since_signal, 0);
  EXPECT_EQ(e.Next(left).kind, ActionKind::kKill);

  Escalation gone(p, EscalationMode::kRun);
  gone.Finished(Inspect(), view);
  term = gone.Next(view);
  HostView after = left;
  after.holders[0].present = false;
  for (GpuReading& g : after.gpus) g.state = GpuState::kClean;
  gone.FinishedStep(term, 0, after);
  ASSERT_TRUE(gone.StepCounts(term, 1, after));
  gone.FinishedStep(term, 1, after);
  EXPECT_TRUE(gone.history().verified);
  ASSERT_TRUE(gone.StepCounts(term, 2, after));
  gone.FinishedStep(term, 2, after);
  EXPECT_EQ(gone.Next(after).kind, ActionKind::kDone);
}

}  // namespace
}  // namespace fleetreap
