// HostCleaner: runs a playbook's escalation on one connected host and returns
// the host's report. It is the runner that does the I/O for the decisions of
// escalation.h: it asks the host's Escalation what to do, runs the matching
// script of remote/ (scan_script.h, signal.h...) over the Transport, folds the answer into the
// view, reports the step back to the Escalation, and asks again until the
// ladder is done. It never prints.
// One call per host; uses only the Transport and clock it is given; calls for
// different hosts may run on different threads at the same time.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "fleetreap/base/clock.h"
#include "fleetreap/escalation/playbook.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/report/report.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

struct HostJob {
  const Host* host = nullptr;          // must outlive the call
  const Playbook* playbook = nullptr;  // must outlive the call
  bool dry_run = false;
  bool become = false;  // run commands under sudo -n
  std::chrono::milliseconds command_timeout{60000};
  /// Hard end for this host (--host-timeout, --deadline); max() for none.
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
  std::vector<std::string> extra_protect;  // --protect
  Scope scope;                             // what the run may act on
  /// The run's audit fields (run id, controller, operator): each step that
  /// changes the host writes its audit lines; none with an empty run id.
  AuditRequest audit;
  /// nullptr: RealClock(). Must outlive the call.
  Clock* clock = nullptr;
  /// Called (on the calling thread) as each step starts, with what it does
  /// and may wait for (StepBrief: "term 8 pids, up to 10.0 s"); may be empty.
  std::function<void(const std::string&)> on_step;
  /// Ctrl-C: once it reads true, the ladder stops before its next step and
  /// the host is kFailed/kInterrupted. nullptr: never. Must outlive the call.
  const std::atomic<bool>* stop_requested = nullptr;
};

/// Runs the escalation on "transport", which is already connected. Fills every
/// field of the report except name, address, port and attempts, which the
/// caller sets. Never throws; transport failures become the report's status:
/// a sudo refusal is kFailed/kSudo, a command that ran out of time
/// kFailed/kCommandTimeout, a lost session kFailed/kConnectionLost (the
/// fleet runner decides about retrying), output past a limit of
/// command_output.h kFailed/kParse, a channel closed without an exit status
/// kFailed/kCommandFailed (each message starts with the step: "inspect: "),
/// the deadline kFailed/kHostTimeout,
/// nvidia-smi failing on the whole host kFailed/kCommandFailed with the
/// tool's message in nvidia_smi_error. Otherwise the host is kClean when
/// every GPU verified clean or protected_only, else kDirty; a ladder that
/// did not converge (Escalation::kMaxSteps actions and more to do) is kDirty
/// with the message "the escalation did not converge after 64 steps". "rounds" counts
/// signal waves. A dry run only inspects (and lists /dev/shm leftovers).
HostReport CleanHost(Transport& transport, const HostJob& job);

}  // namespace fleetreap
