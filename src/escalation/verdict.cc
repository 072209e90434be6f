// JudgeHost (verdict.h): the host's status and findings from its view,
// history and the runner's facts, in one place.
#include "fleetreap/escalation/verdict.h"

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "fleetreap/base/text.h"
#include "fleetreap/escalation/cause.h"
#include "fleetreap/escalation/readiness.h"
#include "fleetreap/escalation/reset_plan.h"

namespace fleetreap {
namespace {

namespace fk = finding_kind;

HostFinding Finding(const char* kind) {
  HostFinding finding;
  finding.kind = kind;
  return finding;
}

// What the scans could not see, in the order the notes give them.
void AddBlindSpots(const HostView& view, std::vector<HostFinding>* out) {
  if (view.holder_walk_failed) {
    HostFinding walk = Finding(fk::kHolderWalkFailed);
    walk.note = true;
    out->push_back(walk);
  }
  if (view.control_only_left_out > 0) {
    HostFinding left = Finding(fk::kControlOnlyLeftOut);
    left.count = view.control_only_left_out;
    left.note = true;
    out->push_back(left);
  }
  if (!view.children_unlisted.empty()) {
    HostFinding blind = Finding(fk::kRespawnWatchBlind);
    blind.pids = view.children_unlisted;
    blind.note = true;
    out->push_back(blind);
  }
  for (const TrackedHolder& t : view.holders) {
    if (!t.present || !t.unheld) continue;
    HostFinding unheld = Finding(fk::kUnheldHolder);
    unheld.pids = {t.holder.pid};
    unheld.names = {t.holder.comm};
    unheld.note = true;
    out->push_back(unheld);
  }
}

// "1234 (comm)" as ParentName says it, split: the pid and the comm ("" unknown).
std::string CommOf(int pid, const HostView& view) {
  const std::string name = ParentName(pid, view.holders, view.parents);
  const size_t open = name.find(" (");
  return open == std::string::npos ? "" : name.substr(open + 2, name.size() - open - 3);
}

void AddRestarts(const HostView& view, std::vector<HostFinding>* out) {
  if (!view.newcomers.empty()) {
    const ChildProcess& first = view.newcomers.front();
    HostFinding newcomer = Finding(fk::kNewcomerWithoutGpu);
    newcomer.pids = {first.pid, first.parent};
    newcomer.names = {first.comm, CommOf(first.parent, view)};
    out->push_back(newcomer);
  }
}

HostFinding Unkillable(const HostView& view) {
  HostFinding unkillable = Finding(fk::kUnkillableHolder);
  for (const TrackedHolder& t : view.holders) {
    if (!t.present || t.holder.fate != HolderFate::kUnkillable) continue;
    unkillable.pids.push_back(t.holder.pid);
    unkillable.names.push_back(t.holder.comm);
    unkillable.detail += t.holder.state;
  }
  return unkillable;
}

HostFinding GpusNotEmpty(const std::vector<GpuReading>& gpus) {
  HostFinding dirty = Finding(fk::kGpusNotEmpty);
  for (const GpuReading& gpu : gpus) {
    if (GpuStateIsClean(gpu.state) || gpu.state == GpuState::kOutOfScope) continue;
    dirty.gpus.push_back(gpu.index);
    if (gpu.used_mib) dirty.mib += *gpu.used_mib;
  }
  return dirty;
}

bool HasReason(const std::vector<HostFinding>& findings);

// Marks the first finding of "kind" in "findings" as the reason, unless
// one already is.
void MakeReason(const char* kind, std::vector<HostFinding>* findings) {
  if (HasReason(*findings)) return;
  for (HostFinding& finding : *findings) {
    if (finding.kind == kind) {
      finding.reason = true;
      return;
    }
  }
}

bool HasReason(const std::vector<HostFinding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const HostFinding& finding) { return finding.reason; });
}

// What the run found and did, whatever the verdict.
void JudgeWhatWasFound(const HostView& view, const History& history, const VerdictFacts& facts,
                       HostVerdict* verdict) {
  const Playbook& playbook = *facts.playbook;
  for (const TrackedHolder& t : view.holders) {
    Holder holder = t.holder;
    if (facts.dry_run && t.present) {
      // With no driver or a GPU off the bus nothing would be signalled.
      const bool stays = facts.stop_ladder && holder.fate != HolderFate::kProtected;
      holder.fate = stays ? HolderFate::kObserved : PlannedFate(playbook, holder);
    }
    verdict->holders.push_back(holder);
  }
  if (facts.dry_run && playbook.Runs(Step::kStopUnits))
    verdict->units_would_stop = view.active_units;
  AddBlindSpots(view, &verdict->findings);
  AddRestarts(view, &verdict->findings);
  verdict->respawning_parent = RespawningParent(view.holders, view.parents);
  if (!view.newcomers.empty() && verdict->respawning_parent.empty()) {
    verdict->respawning_parent =
        ParentName(view.newcomers.front().parent, view.holders, view.parents);
  }
  if (!verdict->respawning_parent.empty()) {
    HostFinding respawning = Finding(fk::kHoldersRespawning);
    respawning.pids = {std::atoi(verdict->respawning_parent.c_str())};
    verdict->findings.push_back(respawning);
  }
  const std::vector<HostFinding> restarters = RestarterFindings(view, history.units_done);
  verdict->findings.insert(verdict->findings.end(), restarters.begin(), restarters.end());
  if (std::optional<HostFinding> cause =
          HolderCause(view, history.units_done, verdict->respawning_parent, restarters)) {
    verdict->findings.push_back(*cause);
  }
  if (playbook.Runs(Step::kResetGhosts)) {
    // reset_plan.h: the scope, a blind scan, the daemons, after the step's words.
    const std::string refused = PlanReset(view, playbook.reset_stops_daemons).refused;
    verdict->reset_blocked_by = facts.reset_said;
    if (facts.reset_said.find(refused) == std::string::npos) {
      verdict->reset_blocked_by = JoinNonEmpty({facts.reset_said, refused}, "; ");
    }
    if (!verdict->reset_blocked_by.empty()) {
      HostFinding blocked = Finding(fk::kResetBlocked);
      blocked.detail = verdict->reset_blocked_by;
      verdict->findings.push_back(blocked);
    }
  }
}

// A reached host's run that failed at the end: a signal refused, or
// nvidia-smi failing outright.
bool JudgeFailure(const VerdictFacts& facts, HostVerdict* verdict) {
  HostFinding failure;
  if (!facts.refused.empty()) {
    failure = Finding(fk::kSignalRefused);
    failure.names = facts.refused;
  } else if (facts.nvidia_smi_failed) {
    failure = Finding(fk::kNvidiaSmiFailed);
    failure.detail = facts.nvidia_smi_error;
  } else {
    return false;
  }
  failure.reason = true;
  verdict->findings.insert(verdict->findings.begin(), failure);
  verdict->status = HostStatus::kFailed;
  verdict->error_kind = ErrorKind::kCommandFailed;
  return true;
}

// Whether the GPUs, newcomers and reset units leave the host clean, the
// findings that say why not added.
bool JudgeCleanliness(const HostView& view, const VerdictFacts& facts, HostVerdict* verdict) {
  const bool empty = view.readiness_checked
                         ? HostGpusEmpty(facts.gpus_after, facts.threshold_mib) ||
                               HostGpusEmptyButForNamedMissing(facts.gpus_after,
                                                               facts.threshold_mib, view.readiness)
                         : HostGpusClean(facts.gpus_after);
  if (!empty) verdict->findings.push_back(GpusNotEmpty(facts.gpus_after));
  std::vector<std::string> not_restarted;
  for (const std::string& unit : facts.reset_units_stopped) {
    const auto& started = facts.reset_units_started;
    if (std::find(started.begin(), started.end(), unit) == started.end()) {
      not_restarted.push_back(unit);
    }
  }
  const bool units_back = facts.reset_units_started.size() == facts.reset_units_stopped.size();
  if (!units_back) {
    // Said first: a daemon left stopped matters more than the GPUs' dirt.
    HostFinding units = Finding(fk::kResetUnitNotRestarted);
    units.units = not_restarted;
    units.detail = Join(facts.reset_units_down, ", ");
    units.reason = !HasReason(verdict->findings);
    verdict->findings.insert(verdict->findings.begin(), units);
  }
  return empty && view.newcomers.empty() && units_back;
}

// A restarter that started a signalled holder again during this run and
// still lives: it can start the job again after the run, so the host is
// not ready (docs/playbooks.md), and that finding is the reason.
bool ProvenRestarterAlive(HostVerdict* verdict) {
  const int parent = std::atoi(verdict->respawning_parent.c_str());
  if (parent <= 0) return false;
  for (HostFinding& finding : verdict->findings) {
    if (finding.kind != fk::kRestarterAlive || finding.pids.empty()) continue;
    if (finding.pids.front() != parent) continue;
    if (!HasReason(verdict->findings)) {
      finding.reason = true;
      finding.note = false;  // said once, as the reason
    }
    return true;
  }
  return false;
}

}  // namespace

HostStatus StatusWithReadiness(bool clean, const std::vector<ReadinessFinding>& findings) {
  if (!clean) return HostStatus::kDirty;
  return AnyBlocking(findings) ? HostStatus::kNotReady : HostStatus::kClean;
}

HostVerdict JudgeHost(const HostView& view, const History& history, const VerdictFacts& facts) {
  HostVerdict verdict;
  JudgeWhatWasFound(view, history, facts, &verdict);
  std::vector<HostFinding>& findings = verdict.findings;
  if (facts.failed || JudgeFailure(facts, &verdict)) return verdict;
  if (facts.did_not_converge) {
    HostFinding cap = Finding(fk::kDidNotConverge);
    cap.count = Escalation::kMaxSteps;
    cap.reason = true;
    findings.insert(findings.begin(), cap);
  }
  MakeReason(fk::kNewcomerWithoutGpu, &findings);
  const bool clean = JudgeCleanliness(view, facts, &verdict);
  const HostFinding unkillable = Unkillable(view);
  const bool left_out = view.holder_walk_failed || view.control_only_left_out > 0;
  if (!unkillable.pids.empty()) findings.push_back(unkillable);
  if (clean) {
    MakeReason(!unkillable.pids.empty()  ? fk::kUnkillableHolder
               : view.holder_walk_failed ? fk::kHolderWalkFailed
                                         : fk::kControlOnlyLeftOut,
               &findings);
  }
  if (facts.stop_ladder) {
    HostFinding driver = Finding(fk::kDriverUnusable);
    driver.reason = !HasReason(findings);
    findings.push_back(driver);
  }
  verdict.status = StatusWithReadiness(
      clean && unkillable.pids.empty() && !left_out && !facts.did_not_converge, view.readiness);
  if (verdict.status == HostStatus::kClean && ProvenRestarterAlive(&verdict)) {
    verdict.status = HostStatus::kNotReady;
  }
  verdict.error_kind = ErrorKind::kNone;
  return verdict;
}

}  // namespace fleetreap
