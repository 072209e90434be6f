// CleanHost: drives one host's run up the escalation ladder, asking
// NextAction for each step, and turns what it found into the host's report.
#include "fleetreap/base/shell.h"
#include "fleetreap/runner/host_cleaner.h"

#include <algorithm>
#include <thread>

#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/gpu_state.h"
#include "fleetreap/transport/transport.h"
#include "host_cleaner_run.h"

namespace fleetreap {


namespace host_cleaner_internal {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

std::string FirstLine(const std::string& text) {
  std::string line = text.substr(0, text.find('\n'));
  return line.size() > 200 ? line.substr(0, 200) : line;
}

bool Runner::Fail(ErrorKind kind, const std::string& message) {
  if (!failed_) {
    failed_ = true;
    report_.status = HostStatus::kFailed;
    report_.error_kind = kind;
    report_.error_message = message;
  }
  return false;
}

bool Runner::Exec(const std::string& script, milliseconds timeout,
                  CommandResult* result) {
  TimePoint now = clock_.Now();
  if (now >= job_.deadline) return Fail(ErrorKind::kHostTimeout, "host deadline reached");
  if (job_.deadline != TimePoint::max()) {
    timeout = std::min(timeout, duration_cast<milliseconds>(job_.deadline - now));
  }
  *result = transport_.Run(BoundedCommand(script, timeout, job_.become), timeout);
  // Each error names the step: "inspect: stdout exceeded 4 MiB, stopped reading".
  const std::string step = std::string(step_) + ": ";
  switch (result->end) {
    case CommandEnd::kExited:
      break;
    case CommandEnd::kTimedOut:
      return Fail(ErrorKind::kCommandTimeout,
                  step + "command did not finish within " + std::to_string(timeout.count()) +
                      "ms");
    case CommandEnd::kConnectionLost:
      return Fail(ErrorKind::kConnectionLost, step + result->error);
    case CommandEnd::kSignaled:
      return Fail(ErrorKind::kCommandFailed, step + "remote command killed by SIG" + result->signal);
    case CommandEnd::kNotStarted:
      return Fail(ErrorKind::kCommandFailed, step + "remote command not started: " + result->error);
    case CommandEnd::kOutputLimit:
      return Fail(ErrorKind::kParse, step + result->error);
    case CommandEnd::kNoStatus:
      return Fail(ErrorKind::kCommandFailed, step + result->error);
  }
  if (IsSudoRefusal(*result)) return Fail(ErrorKind::kSudo, FirstLine(result->err));
  if (result->exit_code == 124 || result->exit_code == 137) {
    return Fail(ErrorKind::kCommandTimeout,
                step + "remote command ran past " + std::to_string(timeout.count()) + "ms");
  }
  return true;
}

HostReport Runner::Run() {
  TimePoint run_start = clock_.Now();
  for (int step = 0; step < 64 && !failed_; ++step) {
    if (clock_.Now() >= job_.deadline) {
      Fail(ErrorKind::kHostTimeout, "host deadline reached");
      break;
    }
    if (job_.dry_run && history_.inspected) {
      if (playbook_.Runs(Step::kCleanShm) && !playbook_.shm_patterns.empty() &&
          !history_.shm_done) {
        CleanShm(/*dry_run=*/true);
      }
      break;
    }
    // No driver, or a GPU fell off the bus: nothing is signalled or removed.
    if (stop_ladder_ && history_.inspected) break;
    Action action = NextAction(playbook_, view_, history_);
    if (action.kind == ActionKind::kDone) break;
    step_ = ActionKindName(action.kind);
    TimePoint start = clock_.Now();
    switch (action.kind) {
      case ActionKind::kInspect: {
        std::vector<std::string> units;
        if (playbook_.Runs(Step::kStopUnits)) units = playbook_.units;
        bool shm = job_.dry_run && playbook_.Runs(Step::kCleanShm) &&
                   !playbook_.shm_patterns.empty();
        if (shm ? InspectWithShmDryRun(units) : Scan(units, &report_.gpus_before)) {
          report_.gpus_after = report_.gpus_before;
        }
        history_.inspected = true;
        Time("inspect", start);
        break;
      }
      case ActionKind::kStopUnits: {
        // Stopping units changes no holder the inspect saw, so the wave that
        // follows is known now: it rides along in the same round trip.
        History stopped = history_;
        stopped.units_done = true;
        Action wave = NextAction(playbook_, view_, stopped);
        bool signals = wave.kind == ActionKind::kTerm || wave.kind == ActionKind::kKill;
        StopUnits(action, signals && !wave.targets.empty() ? &wave : nullptr);
        break;
      }
      case ActionKind::kTerm:
      case ActionKind::kKill:
        Signal(action);
        break;
      case ActionKind::kRescan: {
        milliseconds since = duration_cast<milliseconds>(start - last_signal_);
        if (action.wait > since) {
          milliseconds sleep = action.wait - since;
          if (job_.deadline != TimePoint::max()) {
            sleep = std::min(sleep, duration_cast<milliseconds>(job_.deadline - start));
          }
          clock_.SleepFor(sleep);
        }
        TimePoint scan_start = clock_.Now();
        // The quick re-scan trusts nvidia-smi when every GPU reads clean; the
        // settle re-scan always looks at the device files again, and so does
        // every re-scan when a signalled holder's parent may restart it.
        bool quick = history_.rescans_since_signal == 0 && WatchedParents(view_.holders).empty();
        if (history_.rescans_since_signal == 0 && FusesShmAndVerify()) {
          RescanWithShmAndVerify(quick);
          Time("rescan+clean_shm+verify", scan_start);
        } else {
          quick ? QuickScan(&report_.gpus_after) : Scan({}, &report_.gpus_after);
          AfterRescan();
          Time("rescan", scan_start);
        }
        break;
      }
      case ActionKind::kCleanShm:
        CleanShm(/*dry_run=*/false, playbook_.Runs(Step::kVerify) && !history_.verified);
        break;
      case ActionKind::kVerify:
        QuickScan(&report_.gpus_after);
        history_.verified = true;
        Time("verify", start);
        break;
      case ActionKind::kResetGpus:
        ResetGpus(action);
        break;
      case ActionKind::kDone:
        break;
    }
  }
  Finish();
  report_.duration = duration_cast<milliseconds>(clock_.Now() - run_start);
  return report_;
}

void Runner::Finish() {
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
  report_.rounds = history_.waves;
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
  if (playbook_.Runs(Step::kResetGhosts)) report_.reset_blocked_by = [&] {
    std::string blockers = ResetBlockers(view_);
    return blockers.empty() ? report_.reset_blocked_by : blockers;
  }();
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
  bool clean = HostGpusClean(report_.gpus_after) && view_.newcomers.empty();
  report_.status = clean ? HostStatus::kClean : HostStatus::kDirty;
  report_.error_kind = ErrorKind::kNone;
  if (stop_ladder_ && report_.error_message.empty()) {
    report_.error_message = "nothing signalled or removed: nvidia-smi says a GPU is lost "
                            "or the driver is not loaded";
  }
}

}  // namespace host_cleaner_internal


HostReport CleanHost(Transport& transport, const HostJob& job) {
  if (job.host == nullptr || job.playbook == nullptr) {
    HostReport report;
    report.error_kind = ErrorKind::kInternal;
    report.error_message = "CleanHost needs a host and a playbook";
    return report;
  }
  host_cleaner_internal::Runner runner(transport, job);
  return runner.Run();
}

}  // namespace fleetreap
