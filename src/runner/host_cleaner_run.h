// The run of one host behind CleanHost (private to the host_cleaner*.cc
// files): the state the runner threads through the ladder and the steps
// themselves; every step reaches the host through HostSteps (host_steps.h).
// host_cleaner.cc performs the actions the Escalation picks, each one round
// trip of its steps, and reports each step back to it;
// host_cleaner_scan.cc reads the host and host_cleaner_action.cc holds the
// requests and readings of the steps that change it.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/host_fold.h"
#include "fleetreap/escalation/protect.h"
#include "fleetreap/remote/batch.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/runner/host_cleaner.h"
#include "fleetreap/runner/host_steps.h"
#include "fleetreap/runner/step_log.h"
#include "script_steps.h"

namespace fleetreap {
namespace host_cleaner_internal {

using TimePoint = std::chrono::steady_clock::time_point;

/// The reply at "i" as a T; a T of nothing when the round trip did not bring it.
template <class T>
T ReplyAt(const std::vector<StepReply>& replies, size_t i) {
  const T* reply = i < replies.size() ? std::get_if<T>(&replies[i]) : nullptr;
  return reply != nullptr ? *reply : T();
}

/// One host's run: the state that CleanHost threads through the ladder.
/// Holds references to "steps" and "job", which must outlive it. Used
/// once, by one thread.
class Runner {
 public:
  Runner(HostSteps& steps, const HostJob& job)
      : steps_(steps),
        job_(job),
        playbook_(*job.playbook),
        clock_(job.clock ? *job.clock : RealClock()),
        escalation_(playbook_, job.dry_run ? EscalationMode::kDryRun : EscalationMode::kRun) {
    fold_.protect = ProtectList::Default();
    fold_.protect.AddAll(playbook_.protect);
    fold_.protect.AddAll(job.host->protect);
    fold_.protect.AddAll(job.extra_protect);
    fold_.scope = job.scope;
    view_.scoped = !job.scope.empty();  // no /dev/shm listing at inspect either
    nvidia_smi_timeout_ = NvidiaSmiTimeoutFor(job.command_timeout);
  }

  HostReport Run();

 private:
  bool Fail(ErrorKind kind, const std::string& message);
  // Fails with "status" unless it is OK.
  bool Check(const Status& status) { return status.ok() || Fail(status.kind(), status.message()); }
  // Reads the host with one scan and folds it into the view; "gpus" gets
  // the classified readings.
  bool Scan(const std::vector<std::string>& units, std::vector<GpuReading>* gpus,
            bool holders = true);
  // Folds "snapshot", a scan of "units" (with the holders or not), into the
  // view and performs the follow-ups the fold asks for.
  bool ReadHost(HostSnapshot snapshot, const std::vector<std::string>& units,
                std::vector<GpuReading>* gpus, bool holders);
  ScanRequest Request(const std::vector<std::string>& units, bool holders) const;
  FoldContext Context() const;
  // Performs "action" (any kind but kDone and kDidNotConverge): its steps
  // (ActionSteps) in one round trip, then each step's reply read and
  // reported to the escalation, in order.
  void Perform(const Action& action);
  // Waits until "wait" has passed since the last signal (a re-scan's).
  void WaitToRescan(std::chrono::milliseconds wait);
  // Whether the round trip's replies may be read: "status" is OK, or the
  // reset's step was not started (ResetCutOff); fails the host otherwise.
  bool Accepted(const Action& action, const Status& status);
  // The requests of one step, in the order they run.
  std::vector<StepRequest> RequestsOf(const Action& step) const;
  // Reads the reply of "step", whose first request is "at" in the batch,
  // into the view and the report; false when the host failed.
  bool Read(const Action& step, const std::vector<StepReply>& replies, size_t at);
  // The inspect's scan of "units": the readings before and, for now, after.
  bool ReadInspect(const std::vector<std::string>& units, const HostSnapshot& snapshot);
  // The reading of "quick", nvidia-smi alone, the known holders standing
  // in; a full Scan follows unless HostGpusClean, to find and classify what
  // holds a GPU.
  bool QuickRead(const HostSnapshot& quick, std::vector<GpuReading>* gpus);
  // The steps of one round trip, as the actions describe them.
  StopUnitsRequest StopsOf(const std::vector<std::string>& units) const;
  ShmRequest ShmOf(bool dry_run, const ShmSelection& which) const;
  // After a whole-host query failed on a lost GPU: asks each GPU of
  // "indexes" alone and adds the readings of those that answer.
  bool QueryGpusOneByOne(const std::vector<int>& indexes, std::vector<GpuReading>* gpus);
  // The signal wave of "action", the targets' parents watched.
  SignalRequest WaveOf(const Action& action) const;
  // A wave's reply: sent at the round trip's start or, "after_stops",
  // when the host's wait began.
  void ReadSignal(const Action& wave, const SignalReply& reply, bool after_stops);
  // Folds a wave's reply into the view and its counts into the report.
  void ApplySignal(const Action& action, const SignalReply& reply, TimePoint signalled);
  // The units the stops stopped, into the report.
  void ReadStops(const UnitStops& stops);
  // RecordShm of each /dev/shm step of "batch", whatever else the round
  // trip's reply says (a reply that could not be read records nothing).
  void RecordShm(const std::vector<StepRequest>& batch, const std::vector<StepReply>& replies);
  // Adds what a /dev/shm step removed (or would) and kept, and why, to the
  // report: every outcome of the step is reported, whatever the verdict.
  void RecordShm(const ShmOutput& out, bool dry_run);
  // A host note when a step's audit lines were due and not written.
  void NoteAudit(const AuditOutcome& audit);
  ResetRequest ResetOf(const Action& action) const;
  // The resets, the daemons' units around them and why a GPU was not reset.
  void ReadReset(const Action& action, const GpuResetReply& reply);
  // The daemons' units of a reset (reset_stops_daemons): stopped, active again.
  void RecordResetUnits(const std::vector<std::string>& units, const GpuResetReply& reply);
  // The reset step did not reply: not started (reset_blocked_by says why,
  // true) or cut off (fails the host, naming the units first).
  bool ResetCutOff(const Action& action, const Status& status);
  // Why "reset" did not succeed, for reset_blocked_by after "GPU N: ".
  std::string ResetFailure(const GpuReset& reset) const;
  void Time(const std::string& step, TimePoint start) {
    report_.timings.push_back(
        {step, std::chrono::duration_cast<std::chrono::milliseconds>(clock_.Now() - start)});
  }
  // The judge's verdict and what the run found, into the report.
  void Finish();

  HostSteps& steps_;
  const HostJob& job_;
  const Playbook& playbook_;
  Clock& clock_;
  FoldState fold_;  // what the folds carry from scan to scan
  std::chrono::milliseconds nvidia_smi_timeout_{20000};
  HostReport report_;
  HostView view_;
  Escalation escalation_;  // the plan: the only writer of the history
  TimePoint last_signal_;
  TimePoint round_trip_start_;  // the round trip under way's
  bool failed_ = false;
  const char* step_ = "inspect";               // the action under way, for Exec's errors
  StepLines step_lines_;                       // -v's lines, the watch's repeats counted
  bool nvidia_smi_failed_ = false;             // the latest scan's query failed outright
  bool stop_ladder_ = false;                   // the fold said so (no driver, lost GPU)
  bool did_not_converge_ = false;              // the escalation's step cap was reached
  bool table_scan_ = false;                    // the scan asks for the plain table too
  std::vector<std::string> refused_;           // "PID (user)" that kill(1) refused
  std::vector<std::string> reset_units_down_;  // "UNIT (state)" not active after a reset
  int audit_unwritten_ = 0;                    // audit lines logger did not take
  uint64_t scan_start_ = 0;                    // the latest holder scan's clock (ticks)
};

}  // namespace host_cleaner_internal
}  // namespace fleetreap
