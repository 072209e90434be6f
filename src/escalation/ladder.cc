// The ladder (escalation.h): NextAction, the one next step for a host, and
// RideAlong, the steps that share its round trip, with the predicates they
// and Escalation's bookkeeping share (HoldersSettled, ShmToClean). Pure.
#include <algorithm>
#include <set>

#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/reset_plan.h"
#include "fleetreap/escalation/shm_scope.h"

namespace fleetreap {

namespace {

constexpr std::chrono::milliseconds kRespawnPoll{500};

bool Signalable(const Playbook& playbook, const TrackedHolder& t) {
  return t.present && !t.unheld && !NeverSignalled(t.holder.fate) &&
         t.holder.round <= playbook.max_rounds;
}

std::vector<Target> SortedTargets(std::vector<Target> targets) {
  std::sort(targets.begin(), targets.end(),
            [](const Target& a, const Target& b) { return a.pid < b.pid; });
  return targets;
}

std::vector<Target> TermTargets(const Playbook& playbook, const HostView& view) {
  std::vector<Target> targets;
  if (!playbook.Runs(Step::kTerm)) return targets;
  for (const TrackedHolder& t : view.holders) {
    if (Signalable(playbook, t) && !t.term_sent && !t.kill_sent) {
      targets.push_back({t.holder.pid, t.holder.start_time, !t.holder.devices.empty()});
    }
  }
  return SortedTargets(targets);
}

std::vector<Target> KillTargets(const Playbook& playbook, const HostView& view) {
  std::vector<Target> targets;
  if (!playbook.Runs(Step::kKill)) return targets;
  bool term = playbook.Runs(Step::kTerm);
  for (const TrackedHolder& t : view.holders) {
    if (Signalable(playbook, t) && !t.kill_sent && (t.term_sent || !term)) {
      targets.push_back({t.holder.pid, t.holder.start_time, !t.holder.devices.empty()});
    }
  }
  return SortedTargets(targets);
}

// A signalled holder ran in a unit whose Restart= may start it again.
bool RestartingUnitHeld(const std::vector<TrackedHolder>& holders) {
  return std::any_of(holders.begin(), holders.end(), [](const TrackedHolder& t) {
    return t.signalled_at > 0 && !t.holder.owner.unit_restart.empty();
  });
}

// Something may still start a signalled holder again: a watched parent
// lives, or a holder's unit restarts on its own and the playbook did not
// stop it.
bool RestarterMayAct(const HostView& view, const History& history) {
  if (!view.restarters.empty()) return true;
  return !RestartingUnits(view, history.units_done).empty();
}

// The restart watch's k-th re-scan after a signal, as time since it:
// settle_if_clean, then 500 ms more, 1 s more, 1.5 s more...: 11 re-scans
// reach the default respawn_wait (30 s). From the second on, at least
// 500 ms after the settle re-scan that may have come before it.
std::chrono::milliseconds WatchWait(const Playbook& playbook, int k) {
  const std::chrono::milliseconds growing =
      playbook.settle_if_clean + kRespawnPoll * (k * (k + 1) / 2);
  return k >= 2 ? std::max(growing, playbook.settle + kRespawnPoll * (k - 1)) : growing;
}

// The verify that rides along after a step: a quick scan (nvidia-smi only).
Action QuickVerify() {
  Action verify;
  verify.kind = ActionKind::kVerify;
  verify.quick = true;
  return verify;
}

bool VerifyDue(const Playbook& playbook, const History& history) {
  return playbook.Runs(Step::kVerify) && !history.verified;
}

Action CleanShmAction(const Playbook& playbook, const HostView& view) {
  Action clean;
  clean.kind = ActionKind::kCleanShm;
  clean.shm = ShmFilesToClean(playbook, view);
  return clean;
}

// With a live parent a clean first re-scan is followed by the full settle.
bool SettleFollows(const Playbook& playbook, const HostView& view) {
  return !WatchedParents(view.holders).empty() && playbook.settle > playbook.settle_if_clean;
}

// The settle re-scan is due after the quick one: the host still looks dirty,
// or a signalled holder's parent lives (a supervisor, a job queue) and has
// started nothing yet: a restart that comes after the quick re-scan is still
// caught (seen in the soak: a supervisor's 300 ms restart delay grew past
// 500 ms under load).
bool SettleDue(const Playbook& playbook, const HostView& view, const History& history) {
  const bool supervised = !WatchedParents(view.holders).empty() && view.newcomers.empty();
  return history.rescans_since_signal == 1 && (HostLooksDirty(view) || supervised) &&
         playbook.settle > playbook.settle_if_clean;
}

// The stops and the signal waves: kDone when none is due.
Action SignalStep(const Playbook& playbook, const HostView& view, const History& history) {
  Action action;
  if (playbook.Runs(Step::kStopUnits) && !history.units_done && !view.active_units.empty()) {
    action.kind = ActionKind::kStopUnits;
    action.units = view.active_units;
    action.wait = playbook.unit_stop_timeout;
    return action;
  }
  action.targets = TermTargets(playbook, view);
  if (!action.targets.empty()) {
    action.kind = ActionKind::kTerm;
    action.wait = playbook.term_grace;
    return action;
  }
  action.targets = KillTargets(playbook, view);
  if (!action.targets.empty()) {
    action.kind = ActionKind::kKill;
    action.wait = playbook.kill_grace;
    return action;
  }
  return Action();
}

// The re-scans after a wave: kDone when none is due.
Action RescanStep(const Playbook& playbook, const HostView& view, const History& history) {
  Action action;
  if (!playbook.Runs(Step::kRescan) || history.waves == 0) return action;
  // The quick re-scan trusts nvidia-smi when every GPU reads clean; the
  // settle re-scan always looks at the device files again, and so does
  // every re-scan when a signalled holder's parent may restart it.
  const bool parents_watched = !WatchedParents(view.holders).empty();
  action.quick = history.rescans_since_signal == 0 && !parents_watched;
  action.kind = ActionKind::kRescan;
  if (history.signalled_since_scan) {
    // Nothing waits for a restart that nothing can make: after orphans
    // outside a restarting unit the re-scan comes at once.
    if (parents_watched || RestartingUnitHeld(view.holders)) action.wait = playbook.settle_if_clean;
    return action;
  }
  if (SettleDue(playbook, view, history)) {
    action.wait = playbook.settle;
    return action;
  }
  // A restarted worker that has not opened its GPU yet, or a restarter
  // that may still start one: look again, less often as the watch goes
  // on, until respawn_wait after the last signal.
  const int k = history.rescans_since_signal;
  const bool watched = !view.newcomers.empty() || RestarterMayAct(view, history);
  if (watched && !HostLooksDirty(view) && WatchWait(playbook, k - 1) < playbook.respawn_wait) {
    action.wait = std::min(WatchWait(playbook, k), playbook.respawn_wait);
    return action;
  }
  return Action();
}

// The ladder's steps on the holders, in order: kDone once none is due.
Action HolderStep(const Playbook& playbook, const HostView& view, const History& history) {
  Action action = SignalStep(playbook, view, history);
  return action.kind != ActionKind::kDone ? action : RescanStep(playbook, view, history);
}

// The view and history a wave leaves when every target is gone and no
// parent of one lives on: the targets signalled and absent, a parent that
// the batch's stops end ("stopping": the unit's main process, the usual
// orphan after KillMode=process) reparented to init. False when a target's
// parent other than init, a target, or such a main process may live on: a
// respawn watch would follow, and the re-scan waits for it.
bool AfterWave(const Action& wave, const std::vector<std::string>& stopping, HostView* view,
               History* history) {
  std::set<int> targets;
  for (const Target& t : wave.targets) targets.insert(t.pid);
  std::set<int> ending = {0, 1};
  for (const std::string& unit : stopping) {
    auto it = view->units.find(unit);
    if (it != view->units.end() && it->second.main_pid > 1) ending.insert(it->second.main_pid);
  }
  history->units_done = history->units_done || !stopping.empty();
  history->signalled_since_scan = true;
  history->rescans_since_signal = 0;
  history->shm_done = false;
  for (TrackedHolder& t : view->holders) {
    if (targets.count(t.holder.pid) == 0) continue;
    if (ending.count(t.holder.ppid) == 0 && targets.count(t.holder.ppid) == 0) return false;
    t.holder.ppid = 1;
    t.signalled_at = std::max<uint64_t>(t.signalled_at, 1);
    (wave.kind == ActionKind::kKill ? t.kill_sent : t.term_sent) = true;
    t.present = false;
    history->waves = std::max(history->waves, t.holder.round);
  }
  history->waves = std::max(history->waves, 1);
  return true;
}

// The quick re-scan that rides on a wave, and the /dev/shm clean on it,
// when the ladder would come to them at once after the wave (AfterWave);
// Escalation::StepCounts reads the re-scan only when it does. Under a
// scope the clean's selection depends on what the wave signalled: it
// waits for the re-scan's own round trip.
std::vector<Action> RescanAfterWave(const Action& wave, const std::vector<std::string>& stopping,
                                    const HostView& view, const History& history,
                                    const Playbook& playbook) {
  HostView after = view;
  History then = history;
  if (wave.targets.empty() || !AfterWave(wave, stopping, &after, &then)) return {};
  Action rescan = RescanStep(playbook, after, then);
  if (rescan.kind != ActionKind::kRescan || !rescan.quick || rescan.wait.count() != 0) return {};
  std::vector<Action> riders = {rescan};
  if (!view.scoped) {
    std::vector<Action> more = RideAlong(rescan, after, then, playbook);
    riders.insert(riders.end(), more.begin(), more.end());
  }
  return riders;
}

}  // namespace

bool ShmToClean(const Playbook& playbook, const HostView& view, const History& history) {
  if (!playbook.Runs(Step::kCleanShm) || playbook.shm_patterns.empty() || history.shm_done) {
    return false;
  }
  const ShmSelection selection = ShmFilesToClean(playbook, view);
  return selection.all || !selection.only.empty();
}

bool HoldersSettled(const Playbook& playbook, const HostView& view, const History& history) {
  return history.inspected && HolderStep(playbook, view, history).kind == ActionKind::kDone;
}

bool RescanIsTheVerify(const Playbook& playbook, const HostView& view, const History& history) {
  return HoldersSettled(playbook, view, history) &&
         (ShmToClean(playbook, view, history) || VerifyDue(playbook, history));
}

Action NextAction(const Playbook& playbook, const HostView& view, const History& history) {
  Action action;
  if (!history.inspected) {
    action.kind = ActionKind::kInspect;
    return action;
  }
  action = HolderStep(playbook, view, history);
  if (action.kind != ActionKind::kDone) return action;
  if (ShmToClean(playbook, view, history)) return CleanShmAction(playbook, view);
  if (VerifyDue(playbook, history)) return QuickVerify();
  if (playbook.Runs(Step::kResetGhosts) && history.verified && !history.reset_done) {
    // reset_plan.h: nothing on a blind scan; under a scope no daemon stops.
    ResetPlan plan = PlanReset(view, playbook.reset_stops_daemons);
    if (!plan.gpus.empty()) {
      action.kind = ActionKind::kResetGpus;
      action.gpus = plan.gpus;
      action.units = plan.units;
    }
  }
  return action;
}

std::vector<Action> RideAlong(const Action& next, const HostView& view, const History& history,
                              const Playbook& playbook) {
  std::vector<Action> riders;
  const bool verify_due = VerifyDue(playbook, history);
  if (next.kind == ActionKind::kStopUnits) {
    // Stopping units changes no holder the inspect saw, so the wave that
    // follows is known now.
    History stopped = history;
    stopped.units_done = true;
    Action wave = SignalStep(playbook, view, stopped);
    if ((wave.kind == ActionKind::kTerm || wave.kind == ActionKind::kKill) &&
        !wave.targets.empty()) {
      riders.push_back(wave);
      std::vector<Action> more = RescanAfterWave(wave, next.units, view, history, playbook);
      riders.insert(riders.end(), more.begin(), more.end());
    }
  } else if (next.kind == ActionKind::kTerm || next.kind == ActionKind::kKill) {
    riders = RescanAfterWave(next, {}, view, history, playbook);
  } else if (next.kind == ActionKind::kCleanShm && !next.dry_run && verify_due) {
    riders.push_back(QuickVerify());
  } else if (next.kind == ActionKind::kRescan && ShmToClean(playbook, view, history)) {
    // With a live parent a clean first re-scan is followed by the full
    // settle, after which the clean counts: it rides on the settle instead,
    // not on both.
    if (history.signalled_since_scan && history.rescans_since_signal == 0 && verify_due &&
        !SettleFollows(playbook, view)) {
      // Removing unused segments is safe whatever the re-scan finds, and
      // touches no GPU: the clean runs right after the re-scan. A quick
      // re-scan read every GPU with nothing that touches one after it and
      // is the verify itself; a full one is followed by a quick verify in
      // the same round trip.
      riders.push_back(CleanShmAction(playbook, view));
      if (!next.quick) riders.push_back(QuickVerify());
    } else if (!history.signalled_since_scan && SettleDue(playbook, view, history) &&
               SettleFollows(playbook, view)) {
      // The settle's read is the verify; the clean follows it in the same
      // round trip instead of a round trip of its own.
      riders.push_back(CleanShmAction(playbook, view));
    }
  }
  return riders;
}

}  // namespace fleetreap
