// The judge: one pure function turns what a host's run saw (its view, the
// plan's history and the facts the runner gathered on the way) into the
// host's verdict: its status and typed findings (model/host_finding.h). The
// runner carries the verdict into the report; the reports word it. No I/O,
// no clock; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/host_view.h"
#include "fleetreap/escalation/playbook.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/host_finding.h"
#include "fleetreap/model/host_status.h"
#include "fleetreap/model/readiness.h"

namespace fleetreap {

/// What the runner saw on the way that the view does not hold.
struct VerdictFacts {
  const Playbook* playbook = nullptr;  // must outlive the call; never null
  bool dry_run = false;
  /// The run already failed (transport, deadline, interrupt): the verdict
  /// only says what was found; the status stays the runner's.
  bool failed = false;
  int64_t threshold_mib = 0;           // the host's, else the playbook's
  std::vector<GpuReading> gpus_after;  // the last readings the report shows
  std::vector<std::string> reset_units_stopped;
  std::vector<std::string> reset_units_started;
  std::vector<std::string> reset_units_down;  // "UNIT (state)": read down after the reset
  /// What the reset step itself said (a failed stop, a refused GPU, not
  /// started): first in reset_blocked_by, before what still blocks one.
  std::string reset_said;
  std::vector<std::string> refused;  // "PID (user)" that kill(1) refused
  bool nvidia_smi_failed = false;    // the latest query failed outright
  std::string nvidia_smi_error;
  bool stop_ladder = false;       // no driver, or a GPU off the bus
  bool did_not_converge = false;  // the escalation's step cap was reached
};

struct HostVerdict {
  /// kClean, kDirty, kNotReady, or kFailed with "error_kind" (a signal
  /// refused, nvidia-smi failed). Meaningless when the facts say "failed".
  HostStatus status = HostStatus::kFailed;
  ErrorKind error_kind = ErrorKind::kNone;
  /// In the order the reports give them; at most one is the "reason".
  std::vector<HostFinding> findings;
  /// The view's holders, a dry run's present ones with their planned fate.
  std::vector<Holder> holders;
  std::vector<std::string> units_would_stop;  // dry run
  std::string respawning_parent;              // "1234 (comm)", the old report field
  std::string reset_blocked_by;               // the old report field
};

/// The status of a reached host whose GPUs and holders came out "clean" (or
/// not) given its readiness findings: kNotReady when clean and a finding
/// blocks, kClean when clean otherwise, kDirty when not clean (the findings
/// are then reported beside the dirt).
HostStatus StatusWithReadiness(bool clean, const std::vector<ReadinessFinding>& findings);

/// The verdict on a host. A host is clean only when its GPUs read empty (or
/// ask only for what a blocking readiness finding names), no restarted
/// worker waits without a GPU, every daemon unit stopped for a reset is
/// active again, no holder survived SIGKILL and the scans saw every holder;
/// it is not ready (kNotReady) while a restarter that started a signalled
/// holder again in this run still lives.
HostVerdict JudgeHost(const HostView& view, const History& history, const VerdictFacts& facts);

}  // namespace fleetreap
