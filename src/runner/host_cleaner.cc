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
  }
  LogStepsEnd(job_.host->name, step_lines_);
  Finish();
  report_.duration = duration_cast<milliseconds>(clock_.Now() - run_start);
  return report_;
}

void Runner::Perform(const Action& action) {
  if (action.kind == ActionKind::kRescan) WaitToRescan(action.wait);
  round_trip_start_ = clock_.Now();
  const std::vector<Action> steps = ActionSteps(action);
  std::vector<StepRequest> batch;
  std::vector<size_t> first;  // where each step's requests start in "batch"
  for (const Action& step : steps) {
    first.push_back(batch.size());
    for (StepRequest& request : RequestsOf(step)) batch.push_back(std::move(request));
  }
  std::vector<StepReply> replies;
  const Status status = steps_.Run(batch, &replies);
  RecordShm(batch, replies);
  if (Accepted(action, status)) {
    // Each step in the order it ran, reported to the plan once; a step that
    // rode along and does not count is left unread.
    for (size_t i = 0; i < steps.size(); ++i) {
      // A step after a wave that left something did not run (the step
      // itself, a reset not started for the host deadline, is read anyway).
      if (i > 0 && first[i] >= replies.size()) break;
      if (!escalation_.StepCounts(action, i, view_)) continue;
      if (!Read(steps[i], replies, first[i]) || failed_) break;
      escalation_.FinishedStep(action, i, view_, {stop_ladder_});
    }
  }
  Time(StepName(action), round_trip_start_);
}

void Runner::WaitToRescan(milliseconds wait) {
  const TimePoint now = clock_.Now();
  const milliseconds since = duration_cast<milliseconds>(now - last_signal_);
  if (wait <= since) return;
  milliseconds sleep = wait - since;
  if (job_.deadline != TimePoint::max()) {
    sleep = std::min(sleep, duration_cast<milliseconds>(job_.deadline - now));
  }
  clock_.SleepFor(sleep);
}

bool Runner::Accepted(const Action& action, const Status& status) {
  if (status.ok()) return true;
  return action.kind == ActionKind::kResetGpus ? ResetCutOff(action, status) : Check(status);
}

std::vector<StepRequest> Runner::RequestsOf(const Action& step) const {
  switch (step.kind) {
    case ActionKind::kInspect: {
      if (!step.dry_run) return {Request(step.units, true)};
      // A dry run's inspect lists /dev/shm in the same round trip.
      ShmRequest listing = ShmOf(/*dry_run=*/true, ShmSelection());
      listing.audit = AuditRequest();  // a listing changes nothing
      return {listing, Request(step.units, true)};
    }
    case ActionKind::kStopUnits: return {StopsOf(step.units)};
    case ActionKind::kTerm:
    case ActionKind::kKill: return {WaveOf(step)};
    case ActionKind::kRescan: return {Request({}, !step.quick)};
    case ActionKind::kCleanShm: return {ShmOf(step.dry_run, step.shm)};
    case ActionKind::kVerify: return {Request({}, false)};
    case ActionKind::kResetGpus: return {ResetOf(step)};
    case ActionKind::kDone:
    case ActionKind::kDidNotConverge: break;
  }
  return {};
}

bool Runner::Read(const Action& step, const std::vector<StepReply>& replies, size_t at) {
  switch (step.kind) {
    case ActionKind::kInspect:
      return ReadInspect(step.units, ReplyAt<HostSnapshot>(replies, at + (step.dry_run ? 1 : 0)));
    case ActionKind::kStopUnits: ReadStops(ReplyAt<UnitStops>(replies, at)); return true;
    case ActionKind::kTerm:
    case ActionKind::kKill:
      ReadSignal(step, ReplyAt<SignalReply>(replies, at), at > 0);
      return true;
    case ActionKind::kRescan:
      return step.quick ? QuickRead(ReplyAt<HostSnapshot>(replies, at), &report_.gpus_after)
                        : ReadHost(ReplyAt<HostSnapshot>(replies, at), {}, &report_.gpus_after,
                                   /*holders=*/true);
    case ActionKind::kVerify:
      return QuickRead(ReplyAt<HostSnapshot>(replies, at), &report_.gpus_after);
    case ActionKind::kResetGpus:
      // Not started (the host deadline): reset_blocked_by says why.
      if (at < replies.size()) ReadReset(step, ReplyAt<GpuResetReply>(replies, at));
      return true;
    case ActionKind::kCleanShm:  // RecordShm took its reply
    case ActionKind::kDone:
    case ActionKind::kDidNotConverge: break;
  }
  return true;
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
