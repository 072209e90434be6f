// The host_cleaner runner's steps that change a host: stopping units,
// signalling holders, cleaning /dev/shm and resetting GPUs, each as the
// request of its round trip and the reading of its reply.
#include <algorithm>

#include "fleetreap/base/text.h"
#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/host_fold.h"
#include "fleetreap/remote/batch.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/stop_units.h"
#include "host_cleaner_run.h"

namespace fleetreap {
namespace host_cleaner_internal {

using std::chrono::milliseconds;

SignalRequest Runner::WaveOf(const Action& action) const {
  SignalRequest wave;
  wave.signal = action.kind == ActionKind::kKill ? "KILL" : "TERM";
  wave.targets = action.targets;
  wave.wait = action.wait;
  wave.poll = playbook_.poll_interval;
  // The targets' parents: the respawn watch keeps only those still alive.
  wave.parents = SignalParents(action, view_);
  wave.scan_start = scan_start_;
  wave.audit = job_.audit;
  for (const TrackedHolder& tracked : view_.holders) {
    wave.audit.targets[tracked.holder.pid] = AuditFieldsOf(tracked.holder);
  }
  return wave;
}

void Runner::NoteAudit(const AuditOutcome& audit) {
  if (!audit.NotWritten()) return;
  // One note for the host, counting every step's unwritten lines.
  audit_unwritten_ += audit.lines;
  std::vector<std::string>& notes = report_.notes;
  notes.erase(std::remove_if(notes.begin(), notes.end(),
                             [](const std::string& n) { return n.rfind("audit: ", 0) == 0; }),
              notes.end());
  notes.push_back("audit: " + std::to_string(audit_unwritten_) +
                  (audit_unwritten_ == 1 ? " line" : " lines") +
                  " not written to the host's log (" +
                  (audit.exit_code == 127 ? std::string("no logger")
                                          : "logger exit " + std::to_string(audit.exit_code)) +
                  ")");
}

void Runner::ReadSignal(const Action& wave, const SignalReply& reply, bool after_stops) {
  TimePoint signalled = round_trip_start_;
  if (after_stops) {
    // The signals came after the stops and before the wait the host
    // reported: the settle period counts from then.
    const TimePoint end = clock_.Now();
    const milliseconds waited =
        std::min(milliseconds(reply.waited_cs * 10),
                 std::chrono::duration_cast<milliseconds>(end - round_trip_start_));
    signalled = end - waited;
  }
  ApplySignal(wave, reply, signalled);
  NoteAudit(reply.audit);
}

StopUnitsRequest Runner::StopsOf(const std::vector<std::string>& units) const {
  return {units, playbook_.unit_stop_timeout, job_.audit};
}

ShmRequest Runner::ShmOf(bool dry_run, const ShmSelection& which) const {
  ShmRequest shm;
  shm.patterns = playbook_.shm_patterns;
  shm.dry_run = dry_run;
  shm.audit = job_.audit;
  shm.selection = which;
  return shm;
}

void Runner::ApplySignal(const Action& action, const SignalReply& reply, TimePoint signalled) {
  last_signal_ = signalled;
  SignalFold fold = FoldSignal(action, reply, &view_, scan_start_);
  (action.kind == ActionKind::kKill ? report_.kill_sent : report_.term_sent) += fold.sent;
  report_.pidfd_sent += reply.pidfd_sent;
  refused_.insert(refused_.end(), fold.refused.begin(), fold.refused.end());
}

void Runner::ReadStops(const UnitStops& stops) {
  NoteAudit(stops.audit);
  for (const UnitStop& stop : stops.stops) {
    if (stop.exit_code == 0) report_.units_stopped.push_back(stop.unit);
  }
}

void Runner::RecordShm(const std::vector<StepRequest>& batch,
                       const std::vector<StepReply>& replies) {
  for (size_t i = 0; i < batch.size() && i < replies.size(); ++i) {
    if (const auto* shm = std::get_if<ShmRequest>(&batch[i])) {
      RecordShm(ReplyAt<ShmOutput>(replies, i), shm->dry_run);
    }
  }
}

void Runner::RecordShm(const ShmOutput& out, bool dry_run) {
  NoteAudit(out.audit);
  std::vector<std::string>& removed = dry_run ? report_.shm_would_remove : report_.shm_removed;
  removed.insert(removed.end(), out.removed.begin(), out.removed.end());
  // A name kept by one step and removed by a later one is removed.
  auto kept = [&](const std::string& name, const std::string& why) {
    std::string entry = name + ": " + why;
    if (std::find(report_.shm_kept.begin(), report_.shm_kept.end(), entry) ==
        report_.shm_kept.end()) {
      report_.shm_kept.push_back(entry);
    }
  };
  for (const std::string& name : out.in_use) kept(name, "in use");
  for (const std::string& name : out.failed) kept(name, "could not remove: " + out.failed_why);
  for (const std::string& name : out.removed) {
    report_.shm_kept.erase(
        std::remove_if(report_.shm_kept.begin(), report_.shm_kept.end(),
                       [&](const std::string& entry) { return entry.rfind(name + ": ", 0) == 0; }),
        report_.shm_kept.end());
  }
}

namespace {

// A unit's state that tells it is not running (after a stop).
bool Down(const std::string& state) { return state == "inactive" || state == "failed"; }

}  // namespace

void Runner::RecordResetUnits(const std::vector<std::string>& units, const GpuResetReply& reply) {
  if (units.empty()) return;
  if (reply.guard_exit != 0) {
    report_.reset_blocked_by = "no guard could start on the host to start " + Join(units, " ") +
                               " again should the step be cut off (setsid missing?): nothing "
                               "stopped, no GPU reset tried";
    return;
  }
  // Stopped: each unit that read down after the stop (all of them when the
  // states did not come back: the stop may have done its work).
  std::vector<std::string> still_up;
  for (size_t i = 0; i < units.size(); ++i) {
    if (i < reply.after_stop.size() && !Down(reply.after_stop[i])) {
      still_up.push_back(units[i] + " (" + reply.after_stop[i] + ")");
      continue;
    }
    report_.reset_units_stopped.push_back(units[i]);
    const std::string state = i < reply.active.size() ? reply.active[i] : "unknown";
    if (state == "active") {
      report_.reset_units_started.push_back(units[i]);
    } else {
      reset_units_down_.push_back(units[i] + " (" + state + ")");
    }
  }
  if (reply.stop_exit != 0 || !still_up.empty()) {
    const std::string why = reply.stop_exit != 0 && !reply.stop_text.empty()
                                ? FirstLine(reply.stop_text)
                                : "exit " + std::to_string(reply.stop_exit);
    report_.reset_blocked_by =
        "systemctl stop " + Join(units, " ") + ": " + why +
        (still_up.empty() ? "" : "; still running: " + Join(still_up, ", ")) +
        ": no GPU reset tried";
  }
}

// The step ended otherwise than by its reply: not started (the host
// deadline leaves less than its bound), or cut off, when the units may be
// down until the host's guard starts them.
bool Runner::ResetCutOff(const Action& action, const Status& status) {
  if (status.kind() == ErrorKind::kHostTimeout) {
    report_.reset_blocked_by = status.message();
    return true;
  }
  if (action.units.empty()) return Check(status);
  report_.reset_units_stopped = action.units;
  return Fail(status.kind(), "not known to run again after the GPU reset was cut off: " +
                                 Join(action.units, ", ") +
                                 " (the guard on the host starts them once the step's shell has "
                                 "ended; check with systemctl is-active): " +
                                 status.message());
}

ResetRequest Runner::ResetOf(const Action& action) const {
  return {action.gpus,  GpuResetTimeoutFor(nvidia_smi_timeout_),
          action.units, playbook_.unit_stop_timeout,
          job_.audit,   nvidia_smi_timeout_};
}

void Runner::ReadReset(const Action& action, const GpuResetReply& reply) {
  RecordResetUnits(action.units, reply);
  NoteAudit(reply.audit);
  for (const GpuReset& reset : reply.resets) {
    if (reset.exit_code == 0) {
      report_.gpus_reset.push_back(reset.gpu);
    } else if (report_.reset_blocked_by.empty()) {
      report_.reset_blocked_by = "GPU " + std::to_string(reset.gpu) + ": " + ResetFailure(reset);
    }
  }
}

std::string Runner::ResetFailure(const GpuReset& reset) const {
  if (!reset.refused.empty()) return reset.refused + ", so it was not reset";
  if (reset.exit_code == 124 || reset.exit_code == 137) {
    return "nvidia-smi --gpu-reset did not finish within " +
           std::to_string(GpuResetTimeoutFor(nvidia_smi_timeout_).count() / 1000) + "s";
  }
  return reset.message.empty() ? "nvidia-smi --gpu-reset exited " + std::to_string(reset.exit_code)
                               : reset.message;
}

}  // namespace host_cleaner_internal
}  // namespace fleetreap
