// Escalation (escalation.h): the plan of one host, the only writer of its
// History. The ladder's rules it applies are in ladder.cc.
#include "fleetreap/escalation/escalation.h"

#include <algorithm>
#include <cstddef>

namespace fleetreap {

const char* ActionKindName(ActionKind kind) {
  switch (kind) {
    case ActionKind::kInspect: return "inspect";
    case ActionKind::kStopUnits: return "stop_units";
    case ActionKind::kTerm: return "term";
    case ActionKind::kKill: return "kill";
    case ActionKind::kRescan: return "rescan";
    case ActionKind::kCleanShm: return "clean_shm";
    case ActionKind::kVerify: return "verify";
    case ActionKind::kResetGpus: return "reset_gpus";
    case ActionKind::kDone: return "done";
    case ActionKind::kDidNotConverge: return "did_not_converge";
  }
  return "done";
}

std::string StepName(const Action& action) {
  std::string name = ActionKindName(action.kind);
  for (const Action& fused : action.fused) name += std::string("+") + ActionKindName(fused.kind);
  return name;
}

std::vector<Action> ActionSteps(const Action& action) {
  std::vector<Action> steps = {action};
  steps.front().fused.clear();
  steps.insert(steps.end(), action.fused.begin(), action.fused.end());
  return steps;
}

Action Escalation::Next(const HostView& view) const {
  const bool shm =
      playbook_.Runs(Step::kCleanShm) && !playbook_.shm_patterns.empty() && !view.scoped;
  Action action;
  if (mode_ == EscalationMode::kDryRun && history_.inspected) {
    // A dry run reads the host and changes nothing: at most the /dev/shm
    // listing is left, when the inspect did not bring it along.
    if (shm && !history_.shm_done) {
      action.kind = ActionKind::kCleanShm;
      action.dry_run = true;
    }
    return action;
  }
  // No driver, or a GPU fell off the bus: nothing is signalled or removed.
  if (ladder_stopped_) return action;
  action = NextAction(playbook_, view, history_);
  action.fused = RideAlong(action, view, history_, playbook_);
  if (action.kind == ActionKind::kInspect) {
    if (playbook_.Runs(Step::kStopUnits)) action.units = playbook_.units;
    action.dry_run = mode_ == EscalationMode::kDryRun && shm;
  }
  if (action.kind != ActionKind::kDone && steps_ >= kMaxSteps) {
    Action stuck;
    stuck.kind = ActionKind::kDidNotConverge;
    return stuck;
  }
  return action;
}

bool Escalation::StepCounts(const Action& action, size_t i, const HostView& view) const {
  if (i == 0) return true;
  if (i > action.fused.size()) return false;
  const Action& step = action.fused[i - 1];
  // A re-scan rode on a wave before this step (ActionSteps: the wave first).
  const bool on_wave =
      std::any_of(action.fused.begin(), action.fused.begin() + static_cast<std::ptrdiff_t>(i - 1),
                  [](const Action& a) { return a.kind == ActionKind::kRescan; });
  if (step.kind == ActionKind::kRescan) {
    // The re-scan that rode on a wave: when the ladder comes to it now, at
    // once (every target gone, no parent left to restart one).
    const Action next = NextAction(playbook_, view, history_);
    return next.kind == ActionKind::kRescan && next.quick == step.quick && next.wait.count() == 0;
  }
  // After a re-scan that rode on a wave and was left unread, nothing more.
  if (on_wave && history_.signalled_since_scan) return false;
  // The wave after the stops, the verify after the clean: always.
  if (action.kind != ActionKind::kRescan && !on_wave) return true;
  switch (step.kind) {
    case ActionKind::kCleanShm:
      // A clean that rode on a re-scan which found the host clean removed
      // every unused segment there was: it counts, even when a restart
      // watch goes on after it (a later wave makes it due again); else only
      // when the ladder comes to it next.
      return !HostLooksDirty(view) ||
             (HoldersSettled(playbook_, view, history_) && ShmToClean(playbook_, view, history_));
    case ActionKind::kVerify:
      // The quick read after the clean: when the re-scan was the verify.
      return history_.verified;
    default: return true;
  }
}

void Escalation::FinishedStep(const Action& action, size_t i, const HostView& after,
                              const StepResult& result) {
  if (i == 0) ++steps_;
  const Action& step = i == 0 ? action : action.fused.at(i - 1);
  switch (step.kind) {
    case ActionKind::kInspect:
      history_.inspected = true;
      if (step.dry_run) history_.shm_done = true;
      ladder_stopped_ = result.ladder_stopped;
      break;
    case ActionKind::kStopUnits: history_.units_done = true; break;
    case ActionKind::kTerm:
    case ActionKind::kKill: Signalled(step, after); break;
    case ActionKind::kRescan:
      history_.signalled_since_scan = false;
      history_.rescans_since_signal++;
      if (RescanIsTheVerify(playbook_, after, history_)) history_.verified = true;
      break;
    case ActionKind::kCleanShm: history_.shm_done = true; break;
    case ActionKind::kVerify: history_.verified = true; break;
    case ActionKind::kResetGpus:
      history_.reset_done = true;
      history_.verified = false;
      break;
    case ActionKind::kDone:
    case ActionKind::kDidNotConverge: break;
  }
}

void Escalation::Finished(const Action& action, const HostView& after, const StepResult& result) {
  for (size_t i = 0; i <= action.fused.size(); ++i) {
    if (StepCounts(action, i, after)) FinishedStep(action, i, after, result);
  }
}

void Escalation::Signalled(const Action& wave, const HostView& after) {
  history_.signalled_since_scan = true;
  history_.rescans_since_signal = 0;
  history_.shm_done = false;  // the wave's holders may leave segments of their own
  for (const Target& target : wave.targets) {
    for (const TrackedHolder& t : after.holders) {
      if (t.holder.pid == target.pid && t.holder.start_time == target.start_time) {
        history_.waves = std::max(history_.waves, t.holder.round);
      }
    }
  }
}

HolderFate PlannedFate(const Playbook& playbook, const Holder& holder) {
  if (holder.fate == HolderFate::kProtected || holder.fate == HolderFate::kOutOfScope) {
    return holder.fate;
  }
  if (playbook.Runs(Step::kTerm)) return HolderFate::kWouldTerm;
  if (playbook.Runs(Step::kKill)) return HolderFate::kWouldKill;
  return HolderFate::kObserved;
}

}  // namespace fleetreap
