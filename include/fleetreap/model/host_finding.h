// HostFinding: one typed thing the judge (escalation/verdict.h) found about
// a host at the end of its run: a holder that survived SIGKILL, a restarted
// worker without a GPU yet, a blind spot of the scan, a parent that keeps
// restarting holders. The values are the host's (PIDs, GPUs, units, MiB);
// the reports word each kind once (report/host_findings.h) and group hosts
// on the values, never on the words. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/model/holder.h"

namespace fleetreap {

/// The kinds, stable snake_case (the JSON report's findings[].kind).
namespace finding_kind {
constexpr char kSignalRefused[] = "signal_refused";             // names: "PID (user)"
constexpr char kNvidiaSmiFailed[] = "nvidia_smi_failed";        // detail: the tool's message
constexpr char kDidNotConverge[] = "did_not_converge";          // count: the step cap
constexpr char kNewcomerWithoutGpu[] = "newcomer_without_gpu";  // pids, names: child, parent
constexpr char kUnkillableHolder[] = "unkillable_holder";       // pids, names; detail: states
constexpr char kHolderWalkFailed[] = "holder_walk_failed";
constexpr char kControlOnlyLeftOut[] = "control_only_left_out";        // count
constexpr char kDriverUnusable[] = "driver_unusable";                  // a lost GPU or no driver
constexpr char kRespawnWatchBlind[] = "respawn_watch_blind";           // pids: the parents
constexpr char kUnheldHolder[] = "unheld_holder";                      // pids, names
constexpr char kGpusNotEmpty[] = "gpus_not_empty";                     // gpus, mib
constexpr char kHoldersRespawning[] = "holders_respawning";            // pids, names: the parent
constexpr char kResetBlocked[] = "reset_blocked";                      // detail: the blockers
constexpr char kResetUnitNotRestarted[] = "reset_unit_not_restarted";  // units; detail: states
/// A process that may start a signalled holder again still lives after the
/// watch (processes: it, described; detail: the command that stops it, ""
/// when none is known), or a holder's unit restarts on its own (units, mib
/// unused, detail: "systemctl stop UNIT").
constexpr char kRestarterAlive[] = "restarter_alive";
/// Why the holders were there, one per host that had any (cause.h).
constexpr char kCause[] = "cause";
}  // namespace finding_kind

/// The causes (HostFinding::cause), stable snake_case.
namespace holder_cause {
constexpr char kRestarter[] = "restarter";                  // a parent or unit started them again
constexpr char kOutlivedUnitStop[] = "outlived_unit_stop";  // in a stopped unit's cgroup
constexpr char kUnitRunning[] = "unit_running";             // a running unit's own workers
constexpr char kContainer[] = "container";                  // a container's or pod's processes
constexpr char kSlurmJob[] = "slurm_job";                   // a Slurm job's processes
constexpr char kOrphan[] = "orphan";                        // re-parented to init, no unit
constexpr char kJobOutsideUnit[] = "job_outside_unit";      // a live parent, no unit
}  // namespace holder_cause

struct HostFinding {
  std::string kind;  // one of finding_kind
  std::vector<int> pids;
  /// The processes' names (comm, or "PID (user)"), in the order of "pids"
  /// where the kind has both; "" where a name is unknown.
  std::vector<std::string> names;
  std::vector<int> gpus;  // GPU indexes
  std::vector<std::string> units;
  int64_t mib = 0;
  int64_t count = 0;
  std::string detail;  // the host's own text the kind carries (a tool's message)
  /// The processes it names, described (a restarter: user, exe, command
  /// line, cgroup owner with its unit's Restart=).
  std::vector<Holder> processes;
  /// kCause: which cause (holder_cause) and the
  /// unit's Restart=, RestartSec= and KillMode= where one ran them.
  std::string cause;
  std::string restart;
  std::string restart_sec;
  std::string kill_mode;
  /// The host's one-line reason is this finding's (at most one per host).
  bool reason = false;
  /// Said among the host's notes as well.
  bool note = false;
};

}  // namespace fleetreap
