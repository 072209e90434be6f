// The GPU reset's plan (reset_plan.h): ghosts to reset, the daemons' units
// to stop for the others, and why a GPU gets no reset. Pure; thread-safe.
#include "fleetreap/escalation/reset_plan.h"

#include <algorithm>
#include <set>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"

namespace fleetreap {

namespace {

bool Holds(const Holder& holder, int index) {
  return std::find(holder.gpus.begin(), holder.gpus.end(), index) != holder.gpus.end();
}

bool BusyOrGhost(const GpuReading& gpu) {
  return (gpu.state == GpuState::kBusy || gpu.state == GpuState::kGhost) && gpu.index >= 0;
}

// The ghost or busy GPUs whose present holders are all protected (none for a
// ghost): the ones that would want a reset.
std::set<int> OnlyProtectedHold(const HostView& view, bool ghosts_without_holders) {
  std::set<int> gpus;
  for (const GpuReading& gpu : view.gpus) {
    if (!BusyOrGhost(gpu)) continue;
    bool only_protected = true;
    bool any = false;
    for (const TrackedHolder& t : view.holders) {
      if (!t.present || !Holds(t.holder, gpu.index)) continue;
      any = true;
      if (t.holder.fate != HolderFate::kProtected) only_protected = false;
    }
    if (only_protected && (any || (ghosts_without_holders && gpu.state == GpuState::kGhost))) {
      gpus.insert(gpu.index);
    }
  }
  return gpus;
}

std::string GpuList(const std::vector<int>& gpus) {
  std::vector<std::string> words;
  for (int gpu : gpus) words.push_back(std::to_string(gpu));
  return (gpus.size() == 1 ? "GPU " : "GPUs ") + Join(words, ", ");
}

// "the scan, which could not see every holder (...)": "" when it saw them all.
std::string BlindScan(const HostView& view) {
  std::string why;
  if (view.holder_walk_failed) {
    why = "the holder walk did not run";
  } else if (view.control_only_left_out > 0) {
    why = std::to_string(view.control_only_left_out) +
          " control-only holders were left out past the scan's cap";
  }
  return why.empty() ? "" : "the scan, which could not see every holder (" + why + ")";
}

// The daemon plan refused under a scope, with the commands that would do it.
std::string ScopeRefusal(const DaemonReset& daemons) {
  std::string units;
  for (const std::string& unit : daemons.units) units += " " + ShellQuote(unit);
  std::string resets;
  for (int gpu : daemons.gpus) resets += " && nvidia-smi --gpu-reset -i " + std::to_string(gpu);
  return "the run's scope: " + GpuList(daemons.gpus) + " would need" + units +
         " stopped, and these daemons serve every GPU of the host, inside the scope or not; "
         "not done (with the whole node free: systemctl stop --" +
         units + resets + "; systemctl start --" + units + ")";
}

}  // namespace

std::vector<int> ResettableGpus(const HostView& view) {
  std::vector<int> gpus;
  for (const GpuReading& gpu : view.gpus) {
    if (gpu.state != GpuState::kGhost || gpu.index < 0) continue;
    bool held = false;
    for (const TrackedHolder& t : view.holders) {
      held = held || (t.present && Holds(t.holder, gpu.index));
    }
    if (!held) gpus.push_back(gpu.index);
  }
  return gpus;
}

DaemonReset DaemonResetPlan(const HostView& view) {
  DaemonReset plan;
  for (const GpuReading& gpu : view.gpus) {
    if (!BusyOrGhost(gpu)) continue;
    std::vector<std::string> units;
    bool stoppable = true;
    for (const TrackedHolder& t : view.holders) {
      if (!t.present || !Holds(t.holder, gpu.index)) continue;
      stoppable =
          stoppable && t.holder.fate == HolderFate::kProtected && !t.holder.owner.unit.empty();
      units.push_back(t.holder.owner.unit);
    }
    if (!stoppable || units.empty()) continue;
    plan.gpus.push_back(gpu.index);
    for (const std::string& unit : units) {
      if (std::find(plan.units.begin(), plan.units.end(), unit) == plan.units.end()) {
        plan.units.push_back(unit);
      }
    }
  }
  return plan;
}

std::string ResetBlockers(const HostView& view, bool daemons_stoppable) {
  const std::set<int> blocked = OnlyProtectedHold(view, false);
  std::string blockers;
  for (const TrackedHolder& t : view.holders) {
    if (!t.present || t.holder.fate != HolderFate::kProtected) continue;
    bool blocks = false;
    for (int index : t.holder.gpus) blocks = blocks || blocked.count(index) > 0;
    if (!blocks) continue;
    if (!blockers.empty()) blockers += ", ";
    std::string name = t.holder.protected_by.empty() ? t.holder.comm : t.holder.protected_by;
    const bool no_unit = daemons_stoppable && t.holder.owner.unit.empty();
    blockers +=
        name + " (pid " + std::to_string(t.holder.pid) + (no_unit ? ", no unit to stop" : "") + ")";
  }
  return blockers;
}

ResetPlan PlanReset(const HostView& view, bool daemons_stoppable) {
  ResetPlan plan;
  const std::set<int> wanted = OnlyProtectedHold(view, true);
  const std::string blind = BlindScan(view);
  if (!blind.empty()) {
    if (!wanted.empty()) {
      plan.refused = blind + ": " + GpuList({wanted.begin(), wanted.end()}) +
                     " may be held by a process it missed, so no GPU reset is planned";
    }
    return plan;
  }
  plan.gpus = ResettableGpus(view);
  const bool stoppable = daemons_stoppable && !view.scoped;
  if (daemons_stoppable) {
    DaemonReset daemons = DaemonResetPlan(view);
    if (!view.scoped) {
      plan.gpus.insert(plan.gpus.end(), daemons.gpus.begin(), daemons.gpus.end());
      plan.units = daemons.units;
    } else if (!daemons.gpus.empty()) {
      plan.refused = ScopeRefusal(daemons);
    }
  }
  std::sort(plan.gpus.begin(), plan.gpus.end());
  if (plan.refused.empty()) plan.refused = ResetBlockers(view, stoppable);
  return plan;
}

}  // namespace fleetreap
