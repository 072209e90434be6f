// HostSnapshot and SignalReply: what one reply of a host says, as model
// values. remote reads a scan's records into a HostSnapshot (remote/scan.h)
// and a signal wave's into a SignalReply; the escalation folds them into its
// HostView (escalation/host_fold.h). Nothing here is raw host text: every
// field was parsed, by remote's one record rule. Plain values;
// thread-compatible.
//
// A new piece of evidence a scan brings (a record, a field) becomes a field
// here: remote/scan.cc fills it, escalation/host_fold.cc reads it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_health.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/process_tree.h"
#include "fleetreap/model/unit_properties.h"

namespace fleetreap {

/// A process of the Processes box of plain nvidia-smi (graphics clients
/// included), by nvidia-smi's GPU index.
struct TableApp {
  int gpu = 0;
  int pid = 0;
  std::optional<int64_t> used_mib;
};

/// What nvidia-smi's GPU query said.
struct GpuQueryAnswer {
  /// The readings, unclassified: one per row that answered, one kLost per
  /// GPU nvidia-smi named as lost (and, after a failed whole-host query,
  /// those of the GPUs that answered alone).
  std::vector<GpuReading> gpus;
  /// OK, or why the query failed: kCommandFailed with the tool's message
  /// for a failed run, kParse for an answer that cannot be read.
  Status status;
  bool timed_out = false;     // it did not answer within its bound (124, 137)
  bool gpu_lost = false;      // its words say a GPU is lost
  bool stops_ladder = false;  // no driver, or a GPU off the bus (StopsTheLadder)
  /// A failed run on a lost GPU that printed no other GPU's row: only a
  /// query of each GPU alone can read the others.
  bool only_lost_gpus = false;
  std::string tool_message;  // the tool's own words, "" when it said nothing else
};

/// One scan of a host, read.
struct HostSnapshot {
  bool holders_scanned = false;  // the holder part ran (not a quick scan)
  int shell_pid = 0;             // the scan's shell and its ancestors
  uint64_t clock = 0;            // the scan shell's start time (ticks): the scan's start; 0 unknown
  std::vector<int> ancestors;
  std::map<int, std::string> pid_files;  // DaemonPidFiles() index -> first line
  /// False: the shell is in another PID namespace than nvidia-smi's PIDs (the
  /// rest of the holder part was then not read).
  bool sees_host_pid_namespace = true;
  std::string pid_namespace;  // "pid:[4026531836]", "" unknown
  std::vector<std::string> active_units;
  std::map<std::string, UnitProperties> units;  // systemctl show of the active units
  std::string self_cgroup;                      // the scan shell's cgroup path
  /// The holders of device files, described; their "gpus" are device minors
  /// (the N of /dev/nvidiaN) until the fold maps them to indexes.
  std::vector<Holder> holders;
  int device_gpus = 0;                // 1 + the highest GPU device minor held
  std::map<std::string, int> minors;  // device minor by bus id
  std::vector<ComputeApp> apps;       // --query-compute-apps
  std::vector<TableApp> table_apps;   // the Processes box (ScanRequest::table)
  /// The app and table PIDs the fd pass did not see, described from /proc
  /// (absent: this /proc does not show them).
  std::map<int, Holder> app_processes;
  std::vector<ChildProcess> children;  // of the watched parents
  std::vector<ChildProcess> parents;   // the watched parents seen (parent 0)
  /// The watched parents seen, described as holders are (user, exe,
  /// command line, cgroup owner): who may start a holder again.
  std::map<int, Holder> parent_processes;
  /// Watched parents whose children the kernel does not list (no
  /// /proc/PID/task/*/children: CONFIG_PROC_CHILDREN off).
  std::vector<int> children_unlisted;
  /// Holders of control devices only (nvidiactl, nvidia-uvm...), charged
  /// nothing, that the scan left out past its cap: not among "holders".
  int control_only_left_out = 0;
  /// The scan's holder walk could not run: "holders" is not all there is.
  bool holder_walk_failed = false;
  GpuQueryAnswer gpu_query;
  /// The readiness readings (ScanRequest::readiness): the health fields of
  /// the same GPU query, the kernel log's Xid events, the NVSwitch nodes,
  /// the fabric manager and the driver's GPU list.
  bool health_read = false;
  HostHealth health;
};

/// What a signal wave's host said.
/// What a step's audit lines (remote/audit.h) came to: how many it handed to
/// logger and logger's exit status (-1: none handed over; 127: no logger).
struct AuditOutcome {
  int lines = 0;
  int exit_code = -1;
  /// Lines were due and logger did not take them.
  bool NotWritten() const { return lines > 0 && exit_code != 0; }
};

struct SignalReply {
  uint64_t now = 0;  // the host's clock at the signals, in ticks
  std::vector<int> sent;
  std::vector<int> gone;                   // never signalled: gone, reused, or no longer a holder
  std::vector<int> failed;                 // kill(1) refused (EPERM...)
  std::vector<std::pair<int, char>> left;  // still present, with state
  std::vector<int> live_parents;           // of the parents asked about, those alive
  int waited_cs = 0;                       // from the signals to the end of the wait
  AuditOutcome audit = {};                 // the lines of the signals sent
  int pidfd_sent = 0;                      // of "sent", those signalled through a pidfd
};

}  // namespace fleetreap
