// Whole ladders as tables: each row is the action the Escalation picks next
// and what the host looks like once that action ran. The test plays the
// runner: it asks Next, compares, reports the row's view with Finished, and
// asks again; the last row's action is "done" (or "did_not_converge").
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/host_fold.h"
#include "fleetreap/escalation/reset_plan.h"

namespace fleetreap {
namespace {

// What a test row expects of an action: its step name, then "quick",
// "dry_run", the target PIDs, the GPUs and the wait, as present:
// "term pids=10,11 10000ms", "rescan+clean_shm+verify 500ms".
std::string Describe(const Action& action) {
  std::string text = StepName(action);
  if (action.quick) text += " quick";
  if (action.dry_run) text += " dry_run";
  std::vector<Target> targets = action.targets;
  for (const Action& fused : action.fused) {
    targets.insert(targets.end(), fused.targets.begin(), fused.targets.end());
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    text += (i == 0 ? " pids=" : ",") + std::to_string(targets[i].pid);
  }
  for (size_t i = 0; i < action.gpus.size(); ++i) {
    text += (i == 0 ? " gpus=" : ",") + std::to_string(action.gpus[i]);
  }
  if (action.wait.count() > 0) text += " " + std::to_string(action.wait.count()) + "ms";
  return text;
}

// A holder of GPU "gpu" from the inspect scan; "ppid" 1 is an orphan, any
// other a parent that may restart it.
TrackedHolder Worker(int pid, int gpu, int ppid = 1, int round = 1) {
  TrackedHolder t;
  t.holder.pid = pid;
  t.holder.start_time = 1000 + pid;
  t.holder.ppid = ppid;
  t.holder.comm = "worker";
  t.holder.gpus = {gpu};
  t.holder.round = round;
  return t;
}

// The same holder after the runner sent "signal" ("TERM" or "KILL") and the
// host answered: gone, or still there. Folded by the runner's own fold.
TrackedHolder Signalled(TrackedHolder t, const std::string& signal, bool exited) {
  Action wave;
  wave.kind = signal == "KILL" ? ActionKind::kKill : ActionKind::kTerm;
  wave.targets = {{t.holder.pid, t.holder.start_time}};
  SignalReply reply;
  reply.now = 5000;
  reply.sent = {t.holder.pid};
  if (!exited) reply.left = {{t.holder.pid, t.holder.state}};
  reply.live_parents = {t.holder.ppid};
  HostView view;
  view.holders = {t};
  SignalFold fold = FoldSignal(wave, reply, &view);
  EXPECT_EQ(fold.sent, 1);
  return view.holders.front();
}

TrackedHolder Protected(int pid, int gpu) {
  TrackedHolder t = Worker(pid, gpu);
  t.holder.fate = HolderFate::kProtected;
  return t;
}

std::vector<GpuReading> Gpus(std::vector<GpuState> states) {
  std::vector<GpuReading> gpus;
  for (size_t i = 0; i < states.size(); ++i) {
    GpuReading g;
    g.index = static_cast<int>(i);
    g.state = states[i];
    g.used_mib = GpuStateIsClean(states[i]) ? 0 : 1000;
    gpus.push_back(g);
  }
  return gpus;
}

constexpr GpuState kClean = GpuState::kClean;
constexpr GpuState kBusy = GpuState::kBusy;
constexpr GpuState kGhost = GpuState::kGhost;

struct Row {
  std::string action;  // Describe() of the action Next picks
  HostView after;      // the host once it ran
  StepResult result = {};
  /// Where the round trip's steps see different hosts (a re-scan that rode
  /// on a wave finds what the wave left): the host after each step, read
  /// one step at a time as the runner does. Empty: "after" for every step.
  std::vector<HostView> steps = {};
};

// Plays "rows" against a fresh Escalation; returns it for more checks.
Escalation Play(const Playbook& playbook, EscalationMode mode, const std::vector<Row>& rows) {
  Escalation escalation(playbook, mode);
  HostView view;
  for (size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i));
    Action action = escalation.Next(view);
    EXPECT_EQ(Describe(action), rows[i].action);
    if (action.kind == ActionKind::kDone || action.kind == ActionKind::kDidNotConverge) break;
    if (rows[i].steps.empty()) {
      escalation.Finished(action, rows[i].after, rows[i].result);
    } else {
      for (size_t k = 0; k < rows[i].steps.size(); ++k) {
        if (!escalation.StepCounts(action, k, view)) continue;
        view = rows[i].steps[k];
        escalation.FinishedStep(action, k, view, rows[i].result);
      }
    }
    view = rows[i].after;
  }
  return escalation;
}

TEST(EscalationSequenceTest, VllmIncidentTermWorks) {
  // The unit stops and its orphaned workers exit on TERM within the grace.
  TrackedHolder a = Worker(10, 0), b = Worker(11, 1);
  const HostView busy{{a, b}, Gpus({kBusy, kBusy}), {"vllm.service"}};
  const HostView gone{{Signalled(a, "TERM", true), Signalled(b, "TERM", true)},
                      Gpus({kClean, kClean}),
                      {"vllm.service"}};
  Escalation e = Play(DefaultPlaybook(), EscalationMode::kRun,
                      {{"inspect", busy},
                       {"stop_units+term+rescan+clean_shm pids=10,11 30000ms", gone},
                       {"done", {}}});
  EXPECT_EQ(e.history().waves, 1);
  EXPECT_TRUE(e.history().verified);
  EXPECT_TRUE(e.history().shm_done);
  EXPECT_EQ(e.steps(), 2);
}

TEST(EscalationSequenceTest, TermIgnoredThenKill) {
  TrackedHolder a = Worker(10, 0);
  const HostView busy{{a}, Gpus({kBusy}), {}};
  const HostView left{{Signalled(a, "TERM", false)}, Gpus({kBusy}), {}};
  const HostView killed{{Signalled(Signalled(a, "TERM", false), "KILL", true)}, Gpus({kClean}), {}};
  Play(DefaultPlaybook(), EscalationMode::kRun,
       {{"inspect", busy},
        {"term+rescan+clean_shm pids=10 10000ms", left},
        {"kill+rescan+clean_shm pids=10 5000ms", killed},
        {"done", {}}});
}

TEST(EscalationSequenceTest, StragglerStartsANewWave) {
  // GPU 5's worker opened its GPU after the inspect: the quick re-scan that
  // rode on the wave finds it, so the /dev/shm clean after it does not count.
  TrackedHolder first = Worker(10, 0);
  TrackedHolder straggler = Worker(15, 5, 1, /*round=*/2);
  const HostView busy{{first}, Gpus({kBusy, kClean, kClean, kClean, kClean, kClean}), {}};
  const HostView termed{
      {Signalled(first, "TERM", true)}, Gpus({kClean, kClean, kClean, kClean, kClean, kClean}), {}};
  const HostView found{{Signalled(first, "TERM", true), straggler},
                       Gpus({kClean, kClean, kClean, kClean, kClean, kBusy}),
                       {}};
  const HostView all_gone{{Signalled(first, "TERM", true), Signalled(straggler, "TERM", true)},
                          Gpus({kClean, kClean, kClean, kClean, kClean, kClean}),
                          {}};
  Escalation e = Play(DefaultPlaybook(), EscalationMode::kRun,
                      {{"inspect", busy},
                       {"term+rescan+clean_shm pids=10 10000ms", found, {}, {termed, found, found}},
                       {"term+rescan+clean_shm pids=15 10000ms", all_gone},
                       {"done", {}}});
  EXPECT_EQ(e.history().waves, 2);
}

TEST(EscalationSequenceTest, CleanQuickRescanIsTheVerify) {
  // The quick re-scan's nvidia-smi reads every GPU after the wave: no second
  // read follows it, with the /dev/shm clean in its round trip or without one.
  TrackedHolder a = Worker(10, 0);
  const HostView busy{{a}, Gpus({kBusy}), {}};
  const HostView gone{{Signalled(a, "TERM", true)}, Gpus({kClean}), {}};
  Escalation e =
      Play(DefaultPlaybook(), EscalationMode::kRun,
           {{"inspect", busy}, {"term+rescan+clean_shm pids=10 10000ms", gone}, {"done", {}}});
  EXPECT_TRUE(e.history().verified);
  EXPECT_TRUE(e.history().shm_done);
  EXPECT_EQ(e.steps(), 2);
  Playbook no_shm;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, term, kill, rescan, verify]\n", "p", &no_shm).ok());
  Escalation plain = Play(no_shm, EscalationMode::kRun,
                          {{"inspect", busy}, {"term+rescan pids=10 10000ms", gone}, {"done", {}}});
  EXPECT_TRUE(plain.history().verified);
  // A scope (the epilog's) forbids the /dev/shm step: the same.
  HostView scoped_busy = busy, scoped_gone = gone;
  scoped_busy.scoped = scoped_gone.scoped = true;
  Play(DefaultPlaybook(), EscalationMode::kRun,
       {{"inspect", scoped_busy}, {"term+rescan pids=10 10000ms", scoped_gone}, {"done", {}}});
}

TEST(EscalationSequenceTest, DirtyQuickRescanIsNotTheVerify) {
  // Memory the driver still holds after the holder is gone: the full
  // settle, whose read is the verify; the re-scan that read it dirty counts
  // for neither the /dev/shm clean nor the verify.
  TrackedHolder a = Worker(10, 0);
  const HostView busy{{a}, Gpus({kBusy}), {}};
  const HostView draining{{Signalled(a, "KILL", true)}, Gpus({kGhost}), {}};
  const HostView freed{{Signalled(a, "KILL", true)}, Gpus({kClean}), {}};
  Playbook no_shm;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, kill, rescan, verify]\n", "p", &no_shm).ok());
  Play(no_shm, EscalationMode::kRun,
       {{"inspect", busy},
        {"kill+rescan pids=10 5000ms", draining},
        {"rescan 2000ms", freed},
        {"done", {}}});
  Play(DefaultPlaybook(), EscalationMode::kRun,
       {{"inspect", busy},
        {"term+rescan+clean_shm pids=10 10000ms", draining},
        {"rescan 2000ms", freed},
        {"clean_shm", freed},
        {"done", {}}});
}

TEST(EscalationSequenceTest, SupervisedRestartGetsTheFullSettle) {
  // The worker's parent (500) lives: every re-scan reads the device files,
  // and a clean first re-scan is followed by the full settle, which is the
  // verify and carries the /dev/shm clean (no round trip after it).
  TrackedHolder w = Worker(10, 0, /*ppid=*/500);
  const HostView busy{{w}, Gpus({kBusy}), {}};
  const HostView termed{{Signalled(w, "TERM", true)}, Gpus({kClean}), {}};
  Play(DefaultPlaybook(), EscalationMode::kRun,
       {{"inspect", busy},
        {"term pids=10 10000ms", termed},
        {"rescan 500ms", termed},
        {"rescan+clean_shm 2000ms", termed},
        {"done", {}}});
  // Where no full settle follows (settle no longer than settle_if_clean),
  // the first re-scan carries them, as before.
  Playbook short_settle = DefaultPlaybook();
  short_settle.settle = short_settle.settle_if_clean;
  Play(short_settle, EscalationMode::kRun,
       {{"inspect", busy},
        {"term pids=10 10000ms", termed},
        {"rescan+clean_shm+verify 500ms", termed},
        {"done", {}}});
}

TEST(EscalationSequenceTest, TheSettleCarriesTheCleanThroughARestartWatch) {
  // A restarter lives (a supervisor, watched until respawn_wait): the
  // settle re-scan found the host clean and carried the /dev/shm clean, so
  // the watch's last re-scan is the verify and no clean_shm round trip
  // follows it (the H200's "SETTLE CARRIES THE CLEAN").
  TrackedHolder w = Worker(10, 0, /*ppid=*/500);
  const HostView busy{{w}, Gpus({kBusy}), {}};
  HostView termed{{Signalled(w, "TERM", true)}, Gpus({kClean}), {}};
  Holder supervisor;
  supervisor.pid = 500;
  supervisor.comm = "supervisord";
  termed.restarters = {supervisor};
  Playbook watch = DefaultPlaybook();
  watch.respawn_wait = std::chrono::milliseconds(3000);
  Play(watch, EscalationMode::kRun,
       {{"inspect", busy},
        {"term pids=10 10000ms", termed},
        {"rescan 500ms", termed},
        {"rescan+clean_shm 2000ms", termed},
        {"rescan 2500ms", termed},
        {"rescan 3000ms", termed},
        {"done", {}}});
  // A restart caught during the watch is a new wave: its holders may leave
  // segments, so the clean rides on the next settle again.
  TrackedHolder again = Worker(11, 0, /*ppid=*/500, /*round=*/2);
  HostView restarted = termed;
  restarted.holders.push_back(again);
  restarted.gpus = Gpus({kBusy});
  HostView gone = termed;
  gone.holders.push_back(Signalled(again, "TERM", true));
  Play(watch, EscalationMode::kRun,
       {{"inspect", busy},
        {"term pids=10 10000ms", termed},
        {"rescan 500ms", termed},
        {"rescan+clean_shm 2000ms", restarted},
        {"term pids=11 10000ms", gone},
        {"rescan 500ms", gone},
        {"rescan+clean_shm 2000ms", gone},
        {"rescan 2500ms", gone},
        {"rescan 3000ms", gone},
        {"done", {}}});
}

TEST(EscalationSequenceTest, DryRunStopsAfterInspect) {
  const HostView busy{{Worker(10, 0)}, Gpus({kBusy}), {"vllm.service"}};
  Escalation e =
      Play(DefaultPlaybook(), EscalationMode::kDryRun, {{"inspect dry_run", busy}, {"done", {}}});
  EXPECT_TRUE(e.history().shm_done);  // the inspect listed /dev/shm
  EXPECT_EQ(e.history().waves, 0);
}

TEST(EscalationSequenceTest, DryRunWithoutShmPatterns) {
  Playbook no_shm;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, term, kill, rescan, verify]\n", "p", &no_shm).ok());
  const HostView busy{{Worker(10, 0)}, Gpus({kBusy}), {}};
  Play(no_shm, EscalationMode::kDryRun, {{"inspect", busy}, {"done", {}}});
}

TEST(EscalationSequenceTest, ProtectedOnly) {
  const HostView daemons{{Protected(812, 0)}, Gpus({GpuState::kProtectedOnly}), {}};
  Play(DefaultPlaybook(), EscalationMode::kRun,
       {{"inspect", daemons}, {"clean_shm+verify", daemons}, {"done", {}}});
}

TEST(EscalationSequenceTest, LostGpuStopsTheLadder) {
  const HostView busy{{Worker(10, 0)}, Gpus({kBusy}), {}};
  Play(DefaultPlaybook(), EscalationMode::kRun,
       {{"inspect", busy, StepResult{/*ladder_stopped=*/true}}, {"done", {}}});
}

TEST(EscalationSequenceTest, GhostMemoryIsReset) {
  Playbook reset;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, verify, reset_ghosts]\n", "r", &reset).ok());
  const HostView ghost{{}, Gpus({kGhost, kClean}), {}};
  const HostView clean{{}, Gpus({kClean, kClean}), {}};
  Play(reset, EscalationMode::kRun,
       {{"inspect", ghost},
        {"verify quick", ghost},
        {"reset_gpus gpus=0", clean},
        {"verify quick", clean},
        {"done", {}}});
}

// reset_stops_daemons: a ghost GPU that only a protected daemon in a unit
// holds is reset with that unit stopped and started again; one whose daemon
// runs in no unit, or that a job also holds, is not reset.
TEST(EscalationSequenceTest, GhostUnderDaemonsIsResetWithTheirUnitsStopped) {
  Playbook reset;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, verify, reset_ghosts]\nreset_stops_daemons: true\n",
                            "r", &reset)
                  .ok());
  TrackedHolder persistenced = Protected(5, 0);
  persistenced.holder.gpus = {0, 1, 2};
  persistenced.holder.owner.unit = "nvidia-persistenced.service";
  TrackedHolder loose = Protected(6, 1);  // a daemon outside any unit
  TrackedHolder job = Worker(7, 2);
  job.holder.fate = HolderFate::kObserved;
  const HostView ghosts{{persistenced, loose, job}, Gpus({kGhost, kGhost, kGhost}), {}};
  const HostView after{{persistenced, loose, job}, Gpus({kClean, kGhost, kGhost}), {}};
  Play(reset, EscalationMode::kRun,
       {{"inspect", ghosts},
        {"verify quick", ghosts},
        {"reset_gpus gpus=0", after},
        {"verify quick", after},
        {"done", {}}});
  EXPECT_EQ(ResetBlockers(after, true), "worker (pid 5), worker (pid 6, no unit to stop)");
  EXPECT_EQ(DaemonResetPlan(ghosts).units, std::vector<std::string>{"nvidia-persistenced.service"});
  // Without the setting the same host resets nothing.
  Playbook plain;
  ASSERT_TRUE(ParsePlaybook("steps: [inspect, verify, reset_ghosts]\n", "r", &plain).ok());
  Play(plain, EscalationMode::kRun, {{"inspect", ghosts}, {"verify quick", ghosts}, {"done", {}}});
}

TEST(EscalationSequenceTest, UnkillableIsLeftAfterTheSettle) {
  TrackedHolder w = Worker(10, 0);
  const HostView busy{{w}, Gpus({kBusy}), {}};
  const HostView left{{Signalled(w, "TERM", false)}, Gpus({kBusy}), {}};
  const HostView stuck{{Signalled(Signalled(w, "TERM", false), "KILL", false)}, Gpus({kBusy}), {}};
  Play(DefaultPlaybook(), EscalationMode::kRun,
       {{"inspect", busy},
        {"term+rescan+clean_shm pids=10 10000ms", left},
        {"kill+rescan+clean_shm pids=10 5000ms", stuck},
        {"rescan 2000ms", stuck},
        {"clean_shm", stuck},
        {"done", {}}});
}

TEST(EscalationSequenceTest, NonConvergenceEndsAtTheCap) {
  // A holder the signal script reports gone (never signalled) that every
  // re-scan finds again: TERM and re-scan would alternate for ever.
  TrackedHolder w = Worker(10, 0);
  TrackedHolder hidden = w;
  hidden.present = false;
  hidden.holder.fate = HolderFate::kGone;
  const HostView busy{{w}, Gpus({kBusy}), {}};
  const HostView reported_gone{{hidden}, Gpus({kBusy}), {}};
  std::vector<Row> rows = {{"inspect", busy}};
  while (rows.size() < static_cast<size_t>(Escalation::kMaxSteps)) {
    // The re-scan rides on the wave and finds the holder again.
    rows.push_back(
        {"term+rescan+clean_shm pids=10 10000ms", busy, {}, {reported_gone, busy, busy}});
  }
  rows.push_back({"did_not_converge", {}});
  Escalation e = Play(DefaultPlaybook(), EscalationMode::kRun, rows);
  EXPECT_EQ(e.steps(), Escalation::kMaxSteps);
  EXPECT_FALSE(e.history().verified);
}

TEST(EscalationSequenceTest, ConvergingAtTheCapIsDone) {
  // kDone stays kDone at the cap: only a ladder that still wants to act is
  // called stuck.
  const HostView clean{{}, Gpus({kClean}), {}};
  Escalation e(DefaultPlaybook(), EscalationMode::kRun);
  for (int i = 0; i < Escalation::kMaxSteps; ++i) {
    Action verify;
    verify.kind = ActionKind::kVerify;
    e.Finished(verify, clean);
  }
  Action inspect;
  inspect.kind = ActionKind::kInspect;
  e.Finished(inspect, clean);
  Action shm;
  shm.kind = ActionKind::kCleanShm;
  e.Finished(shm, clean);
  EXPECT_EQ(Describe(e.Next(clean)), "done");
}

}  // namespace
}  // namespace fleetreap
