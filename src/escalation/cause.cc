// Restarters and causes (cause.h): who may start a holder again, and why
// the holders were there, read from what the scans already gathered.
#include "fleetreap/escalation/cause.h"

#include <algorithm>
#include <cstdlib>
#include <utility>

namespace fleetreap {
namespace {

namespace fk = finding_kind;
namespace hc = holder_cause;

const UnitProperties* UnitOf(const HostView& view, const std::string& unit) {
  auto found = view.units.find(unit);
  return found == view.units.end() ? nullptr : &found->second;
}

void AddUnit(const HostView& view, const std::string& unit, HostFinding* finding) {
  finding->units = {unit};
  if (const UnitProperties* props = UnitOf(view, unit)) {
    finding->restart = props->restart;
    finding->restart_sec = props->restart_sec;
    finding->kill_mode = props->kill_mode;
  }
}

// The cause of one holder, and the finding that says it, "count" unset. A
// holder of a unit outlived its stop when the unit is no longer running
// (MainPID 0), or when the playbook stopped it and the holder was still
// there to be signalled.
HostFinding CauseOf(const HostView& view, bool units_stopped, const TrackedHolder& t) {
  const Holder& holder = t.holder;
  HostFinding finding;
  finding.kind = fk::kCause;
  const ProcessOwner& owner = holder.owner;
  if (!owner.slurm_job.empty()) {
    finding.cause = hc::kSlurmJob;
    finding.detail = owner.slurm_job;
  } else if (!owner.pod_uid.empty() || !owner.container_id.empty()) {
    finding.cause = hc::kContainer;
    finding.detail = owner.pod_uid.empty()
                         ? owner.container_runtime + " " + owner.container_id.substr(0, 12)
                         : "pod " + owner.pod_uid;
  } else if (!owner.unit.empty()) {
    const UnitProperties* props = UnitOf(view, owner.unit);
    const bool stopped = units_stopped && (t.term_sent || t.kill_sent) &&
                         std::find(view.active_units.begin(), view.active_units.end(),
                                   owner.unit) != view.active_units.end();
    finding.cause = (props != nullptr && props->main_pid == 0) || stopped ? hc::kOutlivedUnitStop
                                                                          : hc::kUnitRunning;
    AddUnit(view, owner.unit, &finding);
  } else {
    finding.cause = holder.ppid <= 1 ? hc::kOrphan : hc::kJobOutsideUnit;
    finding.names = {holder.user};
    finding.detail = owner.cgroup;
    if (holder.ppid > 1) finding.pids = {holder.ppid};
  }
  return finding;
}

// Two holders share a cause when every value the reports say is the same.
std::string CauseKey(const HostFinding& f) {
  std::string key = f.cause + '\n' + f.detail + '\n' + f.kill_mode + '\n' + f.restart;
  for (const std::string& unit : f.units) key += '\n' + unit;
  for (const std::string& name : f.names) key += '\n' + name;
  return key;
}

}  // namespace

std::string StopCommandFor(const Holder& process) {
  const ProcessOwner& owner = process.owner;
  if (!owner.slurm_job.empty()) return "scancel " + owner.slurm_job;
  if (!owner.pod_uid.empty()) return "";
  if (!owner.container_id.empty()) {
    const std::string& runtime = owner.container_runtime;
    if (runtime != "docker" && runtime != "podman") return "";
    return runtime + " stop " + owner.container_id.substr(0, 12);
  }
  if (!owner.unit.empty()) return "systemctl stop " + owner.unit;
  return "kill " + std::to_string(process.pid);
}

std::vector<HostFinding> RestarterFindings(const HostView& view, bool units_stopped) {
  std::vector<HostFinding> out;
  for (const Holder& process : view.restarters) {
    HostFinding finding;
    finding.kind = fk::kRestarterAlive;
    finding.pids = {process.pid};
    finding.names = {process.comm};
    finding.processes = {process};
    finding.detail = StopCommandFor(process);
    if (!process.owner.unit.empty()) AddUnit(view, process.owner.unit, &finding);
    finding.note = true;
    out.push_back(std::move(finding));
  }
  for (const std::string& unit : RestartingUnits(view, units_stopped)) {
    HostFinding finding;
    finding.kind = fk::kRestarterAlive;
    AddUnit(view, unit, &finding);
    finding.detail = "systemctl stop " + unit;
    finding.note = true;
    out.push_back(std::move(finding));
  }
  return out;
}

// The restarter that started holders again, as the cause: a unit whose
// Restart= did (a holder of a later wave in it), else "respawning_parent",
// described by the matching restarter when it lives. nullopt when none.
static std::optional<HostFinding> RestarterCause(const HostView& view,
                                                 const std::string& respawning_parent,
                                                 const std::vector<HostFinding>& restarters) {
  std::optional<HostFinding> cause;
  for (const HostFinding& unit : restarters) {
    if (!unit.processes.empty() || unit.units.empty()) continue;
    for (const TrackedHolder& t : view.holders) {
      if (t.holder.round > 1 && t.holder.owner.unit == unit.units.front()) cause = unit;
    }
    if (cause) break;
  }
  if (!cause && !respawning_parent.empty()) {
    const int parent = std::atoi(respawning_parent.c_str());
    cause = HostFinding();
    for (const HostFinding& alive : restarters) {
      if (!alive.pids.empty() && alive.pids.front() == parent) cause = alive;
    }
    if (cause->pids.empty()) cause->pids = {parent};
  }
  if (cause) {
    cause->kind = fk::kCause;
    cause->cause = hc::kRestarter;
    cause->note = false;
  }
  return cause;
}

std::optional<HostFinding> HolderCause(const HostView& view, bool units_stopped,
                                       const std::string& respawning_parent,
                                       const std::vector<HostFinding>& restarters) {
  std::vector<std::pair<std::string, HostFinding>> tally;  // key, finding with count
  for (const TrackedHolder& t : view.holders) {
    const HolderFate fate = t.holder.fate;
    if (fate == HolderFate::kProtected || fate == HolderFate::kOutOfScope || t.unheld) continue;
    HostFinding cause = CauseOf(view, units_stopped, t);
    const std::string key = CauseKey(cause);
    auto it = std::find_if(tally.begin(), tally.end(),
                           [&key](const auto& entry) { return entry.first == key; });
    if (it == tally.end()) it = tally.insert(tally.end(), {key, cause});
    ++it->second.count;
  }
  if (tally.empty()) return std::nullopt;
  HostFinding most = tally.front().second;
  for (const auto& entry : tally) {
    if (entry.second.count > most.count) most = entry.second;
  }
  std::optional<HostFinding> restarter = RestarterCause(view, respawning_parent, restarters);
  if (restarter) restarter->count = most.count;
  return restarter ? *restarter : most;
}

}  // namespace fleetreap
