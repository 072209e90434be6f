#include "fleetreap/escalation/host_view.h"

#include <algorithm>
#include <map>
#include <set>

namespace fleetreap {

HolderFate FateAfterExit(const TrackedHolder& holder) {
  if (holder.kill_sent) return HolderFate::kKilled;
  if (holder.term_sent) return HolderFate::kTerminated;
  return HolderFate::kGone;
}

namespace {

// A protected holder whose executable changed (it ran exec) is judged
// again: the daemon it was may be gone from it.
void Rejudge(const ProtectList& protect, const Scope& scope, Holder* holder) {
  ProtectDecision decision = protect.Judge(*holder);
  if (!decision.reason.empty()) return;
  holder->protected_by.clear();
  holder->named_like = decision.named_like;
  holder->out_of_scope = OutOfScopeReason(*holder, scope);
  holder->fate = holder->out_of_scope.empty() ? HolderFate::kObserved : HolderFate::kOutOfScope;
}

}  // namespace

void MergeHolderScan(const std::vector<Holder>& scanned, const ProtectList& protect,
                     const Scope& scope, int waves, std::vector<TrackedHolder>* holders) {
  for (TrackedHolder& t : *holders) t.present = false;
  for (const Holder& h : scanned) {
    auto it = std::find_if(holders->begin(), holders->end(), [&](const TrackedHolder& t) {
      return t.holder.pid == h.pid && t.holder.start_time == h.start_time;
    });
    if (it != holders->end()) {
      HolderFate fate = it->holder.fate;
      Holder before = it->holder;
      it->holder = h;
      it->holder.fate = fate == HolderFate::kGone ? HolderFate::kObserved : fate;
      it->holder.protected_by = before.protected_by;
      it->holder.named_like = before.named_like;
      it->holder.out_of_scope = before.out_of_scope;
      if (fate == HolderFate::kProtected && h.exe != before.exe)
        Rejudge(protect, scope, &it->holder);
      if (h.owner.unit_restart.empty()) it->holder.owner.unit_restart = before.owner.unit_restart;
      for (const ShmFile& file : before.shm_files) {
        std::vector<ShmFile>& files = it->holder.shm_files;
        if (std::find(files.begin(), files.end(), file) == files.end()) files.push_back(file);
      }
      int round = before.round;
      it->holder.round = round;
      it->present = true;
      continue;
    }
    TrackedHolder t;
    t.holder = h;
    t.holder.round = waves + 1;
    // A scan may already know (a PID this /proc does not show).
    if (h.protected_by.empty()) {
      ProtectDecision decision = protect.Judge(h);
      t.holder.protected_by = decision.reason;
      t.holder.named_like = decision.named_like;
    }
    t.holder.fate = t.holder.protected_by.empty() ? HolderFate::kObserved : HolderFate::kProtected;
    if (t.holder.protected_by.empty()) {
      t.holder.out_of_scope = OutOfScopeReason(t.holder, scope);
      if (!t.holder.out_of_scope.empty()) t.holder.fate = HolderFate::kOutOfScope;
    }
    holders->push_back(t);
  }
  for (TrackedHolder& t : *holders) {
    if (t.present) continue;
    if (t.holder.fate == HolderFate::kProtected || t.holder.fate == HolderFate::kOutOfScope) {
      continue;
    }
    t.holder.fate = FateAfterExit(t);
  }
}

namespace {

bool InUnit(const Holder& holder, const UnitProperties& unit) {
  return (unit.main_pid > 0 && holder.pid == unit.main_pid) ||
         (!unit.control_group.empty() && CgroupIsUnder(holder.owner.cgroup, unit.control_group));
}

// Under a scope, stopping a unit kills its whole cgroup: it may go only when
// its cgroup lies inside --cgroup, or no holder in it is out of scope and
// one is in scope. "" when it may.
std::string UnitOutsideScope(const UnitProperties& unit, const Scope& scope,
                             const std::vector<TrackedHolder>& holders) {
  if (scope.empty()) return "";
  if (!scope.cgroup.empty() && !CgroupIsUnder(unit.control_group, scope.cgroup)) {
    return "its cgroup " + (unit.control_group.empty() ? "(unknown)" : unit.control_group) +
           " is not inside --cgroup " + scope.cgroup;
  }
  bool ours = false;
  for (const TrackedHolder& t : holders) {
    if (!t.present || !InUnit(t.holder, unit)) continue;
    if (t.holder.fate == HolderFate::kOutOfScope) {
      return "it runs out-of-scope " + t.holder.comm + " (pid " + std::to_string(t.holder.pid) +
             "): " + t.holder.out_of_scope;
    }
    ours = ours || t.holder.fate != HolderFate::kProtected;
  }
  return ours ? "" : "no holder in it is in scope";
}

}  // namespace

std::vector<std::string> UnitsSafeToStop(const std::vector<std::string>& active,
                                         const std::map<std::string, UnitProperties>& props,
                                         const std::string& self_cgroup,
                                         const std::vector<TrackedHolder>& holders,
                                         const Scope& scope, std::vector<std::string>* skipped) {
  std::vector<std::string> safe;
  for (const std::string& unit : active) {
    std::string reason = ProtectedUnitReason(unit);
    auto found = props.find(unit);
    if (reason.empty() && found != props.end()) {
      const UnitProperties& p = found->second;
      if (!p.control_group.empty() && CgroupIsUnder(self_cgroup, p.control_group)) {
        reason = "fleetreap's own session runs in it";
      }
      for (const TrackedHolder& t : holders) {
        if (!reason.empty()) break;
        if (t.holder.fate != HolderFate::kProtected) continue;
        if (InUnit(t.holder, p)) {
          reason = "it runs protected " + t.holder.protected_by + " (pid " +
                   std::to_string(t.holder.pid) + ")";
        }
      }
      if (reason.empty()) reason = UnitOutsideScope(p, scope, holders);
    } else if (reason.empty() && !scope.empty()) {
      reason = "its cgroup is unknown, and a scope is set";
    }
    if (reason.empty()) {
      safe.push_back(unit);
    } else {
      skipped->push_back(unit + ": " + reason);
    }
  }
  return safe;
}

void NumberTheLostGpu(int expected, std::vector<GpuReading>* gpus) {
  GpuReading* lost = nullptr;
  int unnumbered = 0;
  std::vector<bool> seen(expected > 0 ? expected : 0, false);
  for (GpuReading& gpu : *gpus) {
    if (gpu.index < 0 && gpu.state == GpuState::kLost) {
      lost = &gpu;
      ++unnumbered;
    } else if (gpu.index >= 0 && gpu.index < expected) {
      seen[gpu.index] = true;
    }
  }
  if (unnumbered != 1 || std::count(seen.begin(), seen.end(), false) != 1) return;
  lost->index = static_cast<int>(std::find(seen.begin(), seen.end(), false) - seen.begin());
}

std::vector<int> GpusHeldOnlyByProtected(const std::vector<TrackedHolder>& holders,
                                         const std::vector<GpuReading>& gpus) {
  std::vector<int> suspects;
  for (const GpuReading& gpu : gpus) {
    if (gpu.state != GpuState::kBusy || gpu.index < 0) continue;
    bool unprotected = false;
    for (const TrackedHolder& t : holders) {
      bool holds = std::count(t.holder.gpus.begin(), t.holder.gpus.end(), gpu.index) > 0;
      if (t.present && holds && t.holder.fate != HolderFate::kProtected) unprotected = true;
    }
    if (!unprotected) suspects.push_back(gpu.index);
  }
  return suspects;
}

void MarkGhostsWithoutApps(const std::vector<int>& suspects, const std::vector<ComputeApp>& apps,
                           std::vector<GpuReading>* gpus) {
  for (GpuReading& gpu : *gpus) {
    if (std::find(suspects.begin(), suspects.end(), gpu.index) == suspects.end()) continue;
    bool used = false;
    for (const ComputeApp& app : apps) {
      used = used || (!gpu.uuid.empty() && app.gpu_uuid == gpu.uuid) ||
             (!gpu.bus_id.empty() && NormalizeBusId(app.gpu_bus_id) == NormalizeBusId(gpu.bus_id));
    }
    if (used) continue;
    gpu.state = GpuState::kGhost;
    gpu.detail = std::to_string(gpu.used_mib.value_or(0)) +
                 " MiB used by no process (protected daemons hold the device): "
                 "needs a GPU reset or a reboot";
  }
}

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

std::vector<std::string> RestartingUnits(const HostView& view, bool units_stopped) {
  std::vector<std::string> units;
  auto has = [](const std::vector<std::string>& list, const std::string& unit) {
    return std::find(list.begin(), list.end(), unit) != list.end();
  };
  for (const TrackedHolder& t : view.holders) {
    const ProcessOwner& owner = t.holder.owner;
    if (t.signalled_at == 0 || owner.unit_restart.empty() || owner.unit.empty()) continue;
    if (units_stopped && has(view.active_units, owner.unit)) continue;
    if (!has(units, owner.unit)) units.push_back(owner.unit);
  }
  return units;
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

}  // namespace fleetreap
