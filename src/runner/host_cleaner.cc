// CleanHost: performs the actions one host's Escalation picks, reports each
// back to it, and turns what it found into the host's report.
#include "fleetreap/runner/host_cleaner.h"

#include <algorithm>
#include <thread>

#include "fleetreap/base/shell.h"
#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/gpu_state.h"
#include "fleetreap/escalation/readiness.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/runner/step_log.h"
#include "fleetreap/transport/transport.h"
#include "host_cleaner_run.h"

namespace fleetreap {

namespace host_cleaner_internal {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

bool Runner::Fail(ErrorKind kind, const std::string& message) {
  if (!failed_) {
    failed_ = true;
    report_.status = HostStatus::kFailed;
    report_.error_kind = kind;
    report_.error_message = message;
  }
  return false;
}

HostReport Runner::Run() {
  TimePoint run_start = clock_.Now();
  while (!failed_) {
    if (clock_.Now() >= job_.deadline) {
      Fail(ErrorKind::kHostTimeout, "host deadline reached");
      break;
    }
    Action action = escalation_.Next(view_);
    if (action.kind == ActionKind::kDone) break;
    if (action.kind == ActionKind::kDidNotConverge) {
      did_not_converge_ = true;
      break;
    }
    step_ = ActionKindName(action.kind);
    if (job_.stop_requested != nullptr && job_.stop_requested->load()) {
      Fail(ErrorKind::kInterrupted,
           "interrupted before " + StepName(action) + ": the ladder stopped at this step boundary");
      break;
    }
    steps_.StartStep(step_);
    if (job_.on_step) job_.on_step(StepBrief(action));
    const TimePoint step_start = clock_.Now();
    Perform(action);
    LogStep(job_.host->name, action, view_, duration_cast<milliseconds>(clock_.Now() - step_start),
            failed_ ? report_.error_message : "");
    // A fused re-scan reports itself, before the verify it carried.
    const bool reported = action.kind == ActionKind::kRescan && !action.fused.empty();
    if (!failed_ && !reported) escalation_.Finished(action, view_, {stop_ladder_});
  }
  Finish();
  report_.duration = duration_cast<milliseconds>(clock_.Now() - run_start);
  return report_;
}

void Runner::Perform(const Action& action) {
  TimePoint start = clock_.Now();
  switch (action.kind) {
    case ActionKind::kInspect:
      if (action.dry_run ? InspectWithShmDryRun(action.units)
                         : Scan(action.units, &report_.gpus_before)) {
        report_.gpus_after = report_.gpus_before;
      }
      Time(StepName(action), start);
      break;
    case ActionKind::kStopUnits: StopUnits(action); break;
    case ActionKind::kTerm:
    case ActionKind::kKill: Signal(action); break;
    case ActionKind::kRescan: Rescan(action); break;
    case ActionKind::kCleanShm: CleanShm(action); break;
    case ActionKind::kVerify:
      QuickScan(&report_.gpus_after);
      Time(StepName(action), start);
      break;
    case ActionKind::kResetGpus: ResetGpus(action); break;
    case ActionKind::kDone:
    case ActionKind::kDidNotConverge: break;
  }
}

bool Runner::Rescan(const Action& action) {
  TimePoint start = clock_.Now();
  milliseconds since = duration_cast<milliseconds>(start - last_signal_);
  if (action.wait > since) {
    milliseconds sleep = action.wait - since;
    if (job_.deadline != TimePoint::max()) {
      sleep = std::min(sleep, duration_cast<milliseconds>(job_.deadline - start));
    }
    clock_.SleepFor(sleep);
  }
  TimePoint scan_start = clock_.Now();
  bool ok = !action.fused.empty() ? RescanWithShmAndVerify(action)
            : action.quick        ? QuickScan(&report_.gpus_after)
                                  : Scan({}, &report_.gpus_after);
  Time(StepName(action), scan_start);
  return ok;
}

// With readiness read, a GPU that only asks for a recovery action is empty:
// the host is not_ready (its finding names the action), not dirty. A
// daemon's unit stopped for a GPU reset and not active again: dirty; so is a
// holder that survived SIGKILL, and a scan that could not see every holder
// (a walk that did not run, control-only holders past the cap), whatever
// the GPUs read (named in the message).
bool Runner::EndedClean() {
  const int64_t threshold = job_.host->threshold_mib.value_or(playbook_.threshold_mib);
  const bool empty =
      view_.readiness_checked
          ? HostGpusEmpty(report_.gpus_after, threshold) ||
                HostGpusEmptyButForNamedMissing(report_.gpus_after, threshold, report_.readiness)
          : HostGpusClean(report_.gpus_after);
  const std::string unkillable = UnkillableHolders(view_);
  const std::string left_out =
      view_.holder_walk_failed ? HolderWalkFailed(view_) : ControlOnlyLeftOut(view_);
  const bool clean = empty && view_.newcomers.empty() &&
                     report_.reset_units_started.size() == report_.reset_units_stopped.size();
  if (clean && !unkillable.empty() && report_.error_message.empty()) {
    report_.error_message = "unkillable holder left: pid " + unkillable;
  }
  if (clean && unkillable.empty() && !left_out.empty() && report_.error_message.empty()) {
    report_.error_message = left_out;
  }
  return clean && unkillable.empty() && left_out.empty();
}

void Runner::Finish() {
  ReportWhatWasFound();
  if (failed_) return;
  if (!refused_.empty()) {
    std::string pids;
    for (const std::string& p : refused_) pids += (pids.empty() ? "" : ", ") + p;
    Fail(ErrorKind::kCommandFailed,
         "not permitted to signal " + pids + ": run with --become or as root");
    return;
  }
  if (nvidia_smi_failed_) {
    Fail(ErrorKind::kCommandFailed, "nvidia-smi: " + report_.nvidia_smi_error);
    return;
  }
  const bool clean = EndedClean();
  report_.status = StatusWithReadiness(clean && !did_not_converge_, report_.readiness);
  report_.error_kind = ErrorKind::kNone;
  if (did_not_converge_) {
    report_.error_message =
        "the escalation did not converge after " + std::to_string(Escalation::kMaxSteps) + " steps";
  }
  if (stop_ladder_ && report_.error_message.empty()) {
    report_.error_message =
        "nothing signalled or removed: nvidia-smi says a GPU is lost "
        "or the driver is not loaded";
  }
}

void Runner::ReportWhatWasFound() {
  for (TrackedHolder& t : view_.holders) {
    if (job_.dry_run && t.present) {
      // With no driver or a GPU off the bus nothing would be signalled.
      bool stays = stop_ladder_ && t.holder.fate != HolderFate::kProtected;
      t.holder.fate = stays ? HolderFate::kObserved : PlannedFate(playbook_, t.holder);
    }
    report_.holders.push_back(t.holder);
  }
  if (job_.dry_run && playbook_.Runs(Step::kStopUnits)) {
    report_.units_would_stop = view_.active_units;
  }
  report_.rounds = escalation_.history().waves;
  for (const std::string& note : ScanBlindSpots(view_)) report_.notes.push_back(note);
  report_.readiness_checked = view_.readiness_checked;
  report_.readiness = view_.readiness;
  report_.respawning_parent = RespawningParent(view_.holders, view_.parents);
  if (!view_.newcomers.empty()) {
    // A restarted worker that still has not opened a GPU: not ready.
    const ChildProcess& first = view_.newcomers.front();
    const std::string parent = ParentName(first.parent, view_.holders, view_.parents);
    if (report_.respawning_parent.empty()) report_.respawning_parent = parent;
    if (!failed_) {
      report_.error_message = "pid " + std::to_string(first.pid) + " (" + first.comm +
                              "), started by " + parent +
                              " after its GPU holder was signalled, holds no GPU yet";
    }
  }
  if (playbook_.Runs(Step::kResetGhosts)) {
    std::string blockers = ResetBlockers(view_, playbook_.reset_stops_daemons);
    if (!blockers.empty()) report_.reset_blocked_by = blockers;
  }
}

}  // namespace host_cleaner_internal

HostReport CleanHost(Transport& transport, const HostJob& job) {
  ScriptSteps steps(transport, job, job.clock ? *job.clock : RealClock());
  return CleanHostWith(steps, job);
}

HostReport CleanHostWith(HostSteps& steps, const HostJob& job) {
  if (job.host == nullptr || job.playbook == nullptr) {
    HostReport report;
    report.error_kind = ErrorKind::kInternal;
    report.error_message = "CleanHost needs a host and a playbook";
    return report;
  }
  host_cleaner_internal::Runner runner(steps, job);
  return runner.Run();
}

}  // namespace fleetreap
