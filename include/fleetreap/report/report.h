// Report: the data fleetreap produces, per GPU, per holder, per host and per
// run. The escalation fills it; report_table, report_json, report_junit and
// report_markdown render it as pure functions. Plain values; thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/host_finding.h"
#include "fleetreap/model/host_status.h"
#include "fleetreap/model/readiness.h"
#include "fleetreap/model/scope.h"

namespace fleetreap {

struct StepTiming {
  std::string step;  // "connect", "inspect", "stop_units", "term", ...
  std::chrono::milliseconds duration{0};
};

struct HostReport {
  std::string name;
  std::string address;
  int port = 22;
  /// The inventory groups the host is in directly, in inventory order
  /// (Host::groups); the HTML report groups its grid by the first. Empty
  /// for a report read back by merge.
  std::vector<std::string> groups;
  HostStatus status = HostStatus::kFailed;
  ErrorKind error_kind = ErrorKind::kNone;
  /// Why the run failed (transport, deadline, interrupt), as Fail said it;
  /// a report read back from JSON has its one-line reason here. A reached
  /// host's verdict is in "findings" (host_findings.h words both).
  std::string error_message;
  /// The judge's typed findings (escalation/verdict.h), in its order.
  std::vector<HostFinding> findings;
  /// The host key the server offered ("SHA256:...", as ssh-keygen -l prints
  /// it), whatever the policy; "" when key exchange never got that far.
  std::string host_key_fingerprint;
  /// That key's type as ssh names it ("ED25519"); "" as the fingerprint.
  std::string host_key_type;
  /// The known_hosts file --host-key-policy accept-new recorded that key in
  /// (first seen in this run); "" when none was recorded.
  std::string host_key_accepted_into;
  std::vector<GpuReading> gpus_before;
  std::vector<GpuReading> gpus_after;
  std::vector<Holder> holders;
  std::vector<std::string> units_stopped;
  std::vector<std::string> units_would_stop;  // dry run
  std::vector<std::string> units_skipped;     // "UNIT: why it was not stopped"
  std::vector<std::string> shm_removed;
  std::vector<std::string> shm_would_remove;  // dry run
  /// "NAME: why it was not removed": "in use" (open or mapped by a
  /// process) or "could not remove: REASON" (the system's, e.g.
  /// "Permission denied"); in a dry run, the matches that would be kept.
  std::vector<std::string> shm_kept;
  std::vector<StepTiming> timings;
  int term_sent = 0;
  int kill_sent = 0;
  int pidfd_sent = 0;             // of term_sent + kill_sent, those sent through a pidfd
  int rounds = 0;                 // scan rounds run
  std::string respawning_parent;  // "1234 (python3)" when holders kept coming
  std::vector<int> gpus_reset;
  std::string reset_blocked_by;  // protected daemon that blocked a reset
  /// reset_stops_daemons: the daemons' units stopped for the reset, and those
  /// of them active again after it (one missing there leaves the host dirty).
  std::vector<std::string> reset_units_stopped;
  std::vector<std::string> reset_units_started;
  std::string nvidia_smi_error;  // the tool's own message when it failed
  /// Whether the readiness checks ran on this host (the playbook's "ready:"
  /// not all off and the scan reached nvidia-smi), and what they found, the
  /// warnings too, in DecideReadiness's order. Empty when all is well.
  bool readiness_checked = false;
  std::vector<ReadinessFinding> readiness;
  /// What the reader should know that changes no verdict, e.g. "audit:
  /// 2 lines not written (logger exit 1)" (the host's log lacks them).
  std::vector<std::string> notes;
  int attempts = 1;  // connection attempts
  std::chrono::milliseconds duration{0};
};

/// A selected host with no result of its own that was not simply never
/// started: one in flight when a journal ended (the controller died), or one
/// `merge --expect` names and no merged report holds.
struct MissingReport {
  std::string name;
  std::string why;  // "in flight when the journal ended", "no report among the merged files"
};

struct RunReport {
  std::string tool_version;
  /// Names this run in every report and in each host's audit lines
  /// ("20261202T061902Z-4f1c2a"); "" in a report written before run ids.
  std::string run_id;
  std::chrono::system_clock::time_point start_time;
  std::chrono::milliseconds duration{0};
  std::string playbook;  // playbook name
  bool dry_run = false;
  bool interrupted = false;  // Ctrl-C: hosts not started are left out
  /// --host-key-policy ("strict", "accept-new", "off"); "" under --local.
  std::string host_key_policy;
  Scope scope;                    // --gpus, --cgroup, or the Slurm job
  std::vector<HostReport> hosts;  // in inventory order
  /// Names of selected hosts never started (interrupted, deadline), in
  /// inventory order; the reports list them and --failed-hosts includes them.
  std::vector<std::string> not_started;
  /// Selected hosts without a result for another reason (see MissingReport),
  /// in the order found; the reports list them and --failed-hosts includes them.
  std::vector<MissingReport> no_report;
  /// Why the run's waves stopped before every host ran (--max-fail, or a
  /// wave whose every host failed; wave_plan.h): the reason the reports
  /// give each host of not_started. "" when no cap stopped the run.
  std::string stopped;
};

/// Every selected host without a result, never-started ones first: name and
/// the words the reports give for it (RunReport::stopped, else
/// "interrupted", for not_started; the
/// MissingReport's why for the others).
struct HostWithoutResult {
  std::string name;
  bool started_never = true;  // from not_started; false: from no_report
  std::string why;
};
std::vector<HostWithoutResult> HostsWithoutResult(const RunReport& report);

/// Exit code for a finished run: 0 clean, |1 reached and not clean (dirty,
/// or not_ready: empty but not ready), |2 unreachable or failed, never
/// started or without a report, |4 the waves were stopped
/// (RunReport::stopped). A dry run only sets bit 2.
int ExitCodeFor(const RunReport& report);

}  // namespace fleetreap
