// CleanHost: performs the actions one host's Escalation picks, reports each
// back to it, and turns what it found into the host's report.
#include "fleetreap/runner/host_cleaner.h"

#include <algorithm>
#include <thread>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/verdict.h"
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
    LogStep(job_.host->name, step_lines_, action, view_,
            duration_cast<milliseconds>(clock_.Now() - step_start),
            failed_ ? report_.error_message : "");
    // A fused re-scan reports itself, before the verify it carried.
    const bool reported = action.kind == ActionKind::kRescan && !action.fused.empty();
    if (!failed_ && !reported) escalation_.Finished(action, view_, {stop_ladder_});
  }
  LogStepsEnd(job_.host->name, step_lines_);
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

// The verdict is the judge's (escalation/verdict.h); the runner hands it
// what it saw on the way and carries the verdict into the report.
void Runner::Finish() {
  VerdictFacts facts;
  facts.playbook = &playbook_;
  facts.dry_run = job_.dry_run;
  facts.failed = failed_;
  facts.threshold_mib = job_.host->threshold_mib.value_or(playbook_.threshold_mib);
  facts.gpus_after = report_.gpus_after;
  facts.reset_units_stopped = report_.reset_units_stopped;
  facts.reset_units_started = report_.reset_units_started;
  facts.reset_units_down = reset_units_down_;
  facts.reset_said = report_.reset_blocked_by;
  facts.refused = refused_;
  facts.nvidia_smi_failed = nvidia_smi_failed_;
  facts.nvidia_smi_error = report_.nvidia_smi_error;
  facts.stop_ladder = stop_ladder_;
  facts.did_not_converge = did_not_converge_;
  HostVerdict verdict = JudgeHost(view_, escalation_.history(), facts);
  report_.holders = std::move(verdict.holders);
  report_.units_would_stop = std::move(verdict.units_would_stop);
  report_.rounds = escalation_.history().waves;
  report_.readiness_checked = view_.readiness_checked;
  report_.readiness = view_.readiness;
  report_.respawning_parent = std::move(verdict.respawning_parent);
  if (!verdict.reset_blocked_by.empty()) report_.reset_blocked_by = verdict.reset_blocked_by;
  report_.findings = std::move(verdict.findings);
  if (failed_) return;
  report_.status = verdict.status;
  report_.error_kind = verdict.error_kind;
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
