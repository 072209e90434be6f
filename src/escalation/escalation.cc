#include "fleetreap/escalation/escalation.h"

#include <algorithm>
#include <map>
#include <set>


namespace fleetreap {

namespace {

constexpr std::chrono::milliseconds kRespawnPoll{500};

bool Signalable(const Playbook& playbook, const TrackedHolder& t) {
  return t.present && !NeverSignalled(t.holder.fate) &&
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

bool HoldsGpu(const Holder& holder, int index) {
  return std::find(holder.gpus.begin(), holder.gpus.end(), index) !=
         holder.gpus.end();
}

}  // namespace

std::string ParentName(int pid, const std::vector<TrackedHolder>& holders,
                       const std::vector<ChildProcess>& parents) {
  std::string name = std::to_string(pid);
  for (const TrackedHolder& p : holders) {
    if (p.holder.pid == pid) return name + " (" + p.holder.comm + ")";
  }
  for (const ChildProcess& p : parents) {
    if (p.parent == pid) return name + " (" + p.comm + ")";
  }
  return name;
}

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
  }
  return "done";
}

Action NextAction(const Playbook& playbook, const HostView& view,
                  const History& history) {
  Action action;
  if (!history.inspected) {
    action.kind = ActionKind::kInspect;
    return action;
  }
  if (playbook.Runs(Step::kStopUnits) && !history.units_done &&
      !view.active_units.empty()) {
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
  if (playbook.Runs(Step::kRescan) && history.waves > 0) {
    if (history.signalled_since_scan) {
      action.kind = ActionKind::kRescan;
      action.wait = playbook.settle_if_clean;
      return action;
    }
    // The full settle also applies when a signalled holder's parent lives
    // (a supervisor, a job queue) and has started nothing yet: a restart
    // that comes after the quick re-scan is still caught (seen in the soak:
    // a supervisor's 300 ms restart delay grew past 500 ms under load).
    const bool supervised = !WatchedParents(view.holders).empty() && view.newcomers.empty();
    if (history.rescans_since_signal == 1 && (HostLooksDirty(view) || supervised) &&
        playbook.settle > playbook.settle_if_clean) {
      action.kind = ActionKind::kRescan;
      action.wait = playbook.settle;
      return action;
    }
    // A restarted worker that has not opened its GPU yet: look again soon.
    const std::chrono::milliseconds next =
        playbook.settle_if_clean +
        kRespawnPoll * history.rescans_since_signal;
    if (!view.newcomers.empty() && !HostLooksDirty(view) && next <= playbook.respawn_wait) {
      action.kind = ActionKind::kRescan;
      action.wait = next;
      return action;
    }
  }
  if (playbook.Runs(Step::kCleanShm) && !history.shm_done &&
      !playbook.shm_patterns.empty()) {
    action.kind = ActionKind::kCleanShm;
    return action;
  }
  if (playbook.Runs(Step::kVerify) && !history.verified) {
    action.kind = ActionKind::kVerify;
    return action;
  }
  if (playbook.Runs(Step::kResetGhosts) && history.verified &&
      !history.reset_done) {
    action.gpus = ResettableGpus(view);
    if (!action.gpus.empty()) {
      action.kind = ActionKind::kResetGpus;
      return action;
    }
  }
  action.targets.clear();
  action.kind = ActionKind::kDone;
  return action;
}

HolderFate PlannedFate(const Playbook& playbook, const Holder& holder) {
  if (holder.fate == HolderFate::kProtected || holder.fate == HolderFate::kOutOfScope) {
    return holder.fate;
  }
  if (playbook.Runs(Step::kTerm)) return HolderFate::kWouldTerm;
  if (playbook.Runs(Step::kKill)) return HolderFate::kWouldKill;
  return HolderFate::kObserved;
}

HolderFate FateAfterExit(const TrackedHolder& holder) {
  if (holder.kill_sent) return HolderFate::kKilled;
  if (holder.term_sent) return HolderFate::kTerminated;
  return HolderFate::kGone;
}

bool HostLooksDirty(const HostView& view) {
  if (view.gpus.empty()) return true;
  for (const GpuReading& gpu : view.gpus) {
    if (!GpuStateIsClean(gpu.state)) {
      return true;
    }
  }
  for (const TrackedHolder& t : view.holders) {
    if (t.present && t.holder.fate != HolderFate::kProtected &&
        t.holder.fate != HolderFate::kUnkillable && t.holder.fate != HolderFate::kOutOfScope) {
      return true;
    }
  }
  return false;
}

std::string RespawningParent(const std::vector<TrackedHolder>& holders,
                             const std::vector<ChildProcess>& parents) {
  std::map<int, int> first_signalled_round;  // ppid -> earliest wave
  for (const TrackedHolder& t : holders) {
    if (!(t.term_sent || t.kill_sent)) continue;
    int ppid = t.holder.ppid;
    if (ppid <= 1) continue;
    auto it = first_signalled_round.find(ppid);
    if (it == first_signalled_round.end() || t.holder.round < it->second) {
      first_signalled_round[ppid] = t.holder.round;
    }
  }
  for (const TrackedHolder& t : holders) {
    auto it = first_signalled_round.find(t.holder.ppid);
    if (it == first_signalled_round.end() || t.holder.round <= it->second) {
      continue;
    }
    return ParentName(t.holder.ppid, holders, parents);
  }
  return "";
}

std::vector<int> WatchedParents(const std::vector<TrackedHolder>& holders) {
  std::set<int> own;
  for (const TrackedHolder& t : holders) own.insert(t.holder.pid);
  std::set<int> parents;
  for (const TrackedHolder& t : holders) {
    if (t.signalled_at > 0 && t.holder.ppid > 1 && own.count(t.holder.ppid) == 0) {
      parents.insert(t.holder.ppid);
    }
  }
  return {parents.begin(), parents.end()};
}

std::vector<ChildProcess> FindNewcomers(const std::vector<ChildProcess>& children,
                                        const std::vector<TrackedHolder>& holders) {
  std::map<int, uint64_t> first_signal;  // parent -> earliest signal to a child
  std::set<int> tracked;
  for (const TrackedHolder& t : holders) {
    tracked.insert(t.holder.pid);
    if (t.signalled_at == 0 || t.holder.ppid <= 1) continue;
    auto it = first_signal.find(t.holder.ppid);
    if (it == first_signal.end() || t.signalled_at < it->second) {
      first_signal[t.holder.ppid] = t.signalled_at;
    }
  }
  std::vector<ChildProcess> newcomers;
  for (const ChildProcess& child : children) {
    auto it = first_signal.find(child.parent);
    if (it == first_signal.end() || child.start_time < it->second) continue;
    if (tracked.count(child.pid) > 0) continue;
    newcomers.push_back(child);
  }
  return newcomers;
}

std::vector<int> ResettableGpus(const HostView& view) {
  std::vector<int> gpus;
  for (const GpuReading& gpu : view.gpus) {
    if (gpu.state != GpuState::kGhost || gpu.index < 0) continue;
    bool held = false;
    for (const TrackedHolder& t : view.holders) {
      held = held || (t.present && HoldsGpu(t.holder, gpu.index));
    }
    if (!held) gpus.push_back(gpu.index);
  }
  return gpus;
}

std::string ResetBlockers(const HostView& view) {
  std::set<int> blocked;  // ghost or busy GPUs that only protected holders hold
  for (const GpuReading& gpu : view.gpus) {
    if ((gpu.state != GpuState::kBusy && gpu.state != GpuState::kGhost) ||
        gpu.index < 0) {
      continue;
    }
    bool only_protected = true;
    bool any = false;
    for (const TrackedHolder& t : view.holders) {
      if (!t.present || !HoldsGpu(t.holder, gpu.index)) continue;
      any = true;
      if (t.holder.fate != HolderFate::kProtected) only_protected = false;
    }
    if (any && only_protected) blocked.insert(gpu.index);
  }
  std::string blockers;
  for (const TrackedHolder& t : view.holders) {
    if (!t.present || t.holder.fate != HolderFate::kProtected) continue;
    bool blocks = false;
    for (int index : t.holder.gpus) blocks = blocks || blocked.count(index) > 0;
    if (!blocks) continue;
    if (!blockers.empty()) blockers += ", ";
    std::string name = t.holder.protected_by.empty() ? t.holder.comm
                                                     : t.holder.protected_by;
    blockers += name + " (pid " + std::to_string(t.holder.pid) + ")";
  }
  return blockers;
}

}  // namespace fleetreap
