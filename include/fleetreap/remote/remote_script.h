// RemoteScript: the POSIX shell scripts fleetreap runs on a host, one per
// step of the ladder. Each does its whole step in one round trip and
// prints host_records.h records (NUL-terminated, the script's own tag, host
// words only in the payload); remote_script_output.h parses them. They
// need sh, coreutils (stat, timeout, tail, od), findutils, grep and
// nvidia-smi, and logger for the audit lines (audit.h; a step acts without
// it); fuser and procps are not used, and nothing is copied to the host.
//
// A step starts a fixed number of processes, whatever the number of
// holders, device files or processes on the host: one find over the fds of
// every thread (/proc/PID/task/TID/fd: a leader that exited or a thread
// that unshared its files hides nothing; one stat per ARG_MAX batch, for
// character devices only) finds the holders of NVIDIA device files by
// device number (major 195, and the majors that /proc/devices lists for
// nvidia-uvm, nvidia-caps...), and by path for plain files named like
// NVIDIA nodes (the simulated hosts'); one grep over every /proc/PID/maps
// and one stat of the files behind the mappings named nvidia*
// (/proc/PID/map_files/RANGE, else the path in the process's root) find
// those that only map a device; one grep and one find describe the holders; /proc/PID/stat is read
// on the host only by the shell function pst (the fields after the LAST ')'), and the controller
// reads it only with ParseProcStat.
//
// Every value from a playbook or an inventory (unit names, patterns) goes
// through ShellQuote; PIDs and start times are formatted integers. The
// scripts are meant to be wrapped with BoundedCommand. Pure functions;
// thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/base/shell.h"
#include "fleetreap/model/shm_file.h"
#include "fleetreap/model/target.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/remote_script_output.h"

namespace fleetreap {

/// Where a host keeps what the scripts read; tests point these at stand-ins.
struct HostPaths {
  std::string dev_dir = "/dev";  // plain files "<dev_dir>/nvidia*" count by path
  std::string driver_dir = "/proc/driver/nvidia/gpus";  // <bus id>/information
  std::string shm_dir = "/dev/shm";
  std::string kmsg = "/dev/kmsg";  // the kernel log, for the Xid lines
};

// ---------------------------------------------------------------- scan

struct ScanRequest {
  /// Playbook units listed when active ("units" may be globs).
  std::vector<std::string> units;
  std::chrono::milliseconds nvidia_smi_timeout{20000};
  /// The holder scan: the fd pass, --query-compute-apps, the processes'
  /// details. Without it only the GPU query runs (the quick scan).
  bool holders = true;
  /// Parents of signalled holders: their children are listed and described.
  std::vector<int> watch;
  /// Also the plain nvidia-smi table, whose Processes box lists graphics
  /// clients too (driver 580 has no graphics-apps query); with "holders".
  bool table = false;
  /// The readiness readings (escalation/readiness.h): the health fields ride
  /// in the same GPU query; the driver's GPU list, the NVSwitch nodes and
  /// whether the fabric manager runs are read by the shell itself; with
  /// "kernel_log" also the boot record and Xid lines of the kernel log.
  bool readiness = false;
  bool kernel_log = false;
  /// At most this many holders of control devices only (nvidiactl,
  /// nvidia-uvm, no GPU's own file, nothing charged) are described; past it
  /// none of them is, and the scan says how many there were ("ctl N").
  int control_only_cap = 64;
  /// Also the /dev/shm files the holders hold, by inode (with "holders"):
  /// a run under a scope reads which segments are its holders'.
  bool shm_files = false;
};

/// The scan used for inspect, re-scan and verify. Starts at most 21
/// programs (22 with units; tests/unit/remote/process_budget_test.cc counts
/// them): find (the fd folders' counts), find, stat and sort for the fd
/// pass, grep, sort and stat for the mappings, timeout and nvidia-smi for
/// the GPU query and for the compute apps (with the holder part both queries
/// run beside each other and beside the fd and mapping walk, their output
/// in a mktemp -d folder read by two cats and removed by rm), three greps
/// and two finds for the details (the first find also reads the PID
/// namespace and the PID files), systemctl, and with the kernel log dd and
/// grep (the table adds timeout and nvidia-smi). After a /dev/shm listing in
/// the same round trip (ShmListingThenInspectScript) the listing's fd pass
/// is the scan's, and the fd pass starts nothing more. The GPU query asks for ScanGpuFields() in
/// one run; only a driver that names a field it does not know is asked
/// again without that field (three such fields at most), then with the base
/// fields (two processes a run, five runs at most).
/// Prints, in order: "scan 1", "session SHELL ANCESTOR...", "clock TICKS" (the
/// shell's start time: the scan's start), "units RC:TEXT",
/// "gpu RC:TEXT", "apps RC:TEXT", "table RC:TEXT", with "readiness"
/// "drv:BUS_ID...", "fabric NVSWITCHES FM" (FM 1 runs, 0 not, - no NVSwitch)
/// and "kmsg R:TEXT" (R 0 read, 1 not readable; "kmsg -" not asked), then
/// "majors (N NAME)...", "fd PID FD MAJ MIN", "fdp PID FD:PATH" (one per
/// PID and device, FD one of its fds), "mmp PID:PATH", "mm PID MAJ MIN" (a
/// mapping, by path or number), "ctl N" (N control-only holders left out
/// past control_only_cap, whose records and details are not printed; absent
/// when none), "minor N:BUS_ID", "kids PARENT CHILD..." ("kids PARENT -"
/// when the kernel has no children files), then
/// "/proc/PID/stat:..", "/proc/PID/status:..", "/proc/PID/cmdline:ARG",
/// "/etc/passwd:..", "exe PID:TARGET", with "shm_files" "shmh 1" (or
/// "shmh -") and "shmf PID INODE UID" (the /dev/shm files the holders hold;
/// up to six more processes), and "end". RC is "-" for a query
/// not run (quick scan, or nvidia-smi already timed out).
std::string ScanScript(const ScanRequest& request, const HostPaths& paths = HostPaths());

/// The fields the scan asks --query-gpu for: GpuQueryFields() then the
/// readiness fields of GpuHealthFields() (gpu_health_query.h) not among them.
const std::vector<std::string>& ScanGpuFields();

/// The fields the scan asks --query-compute-apps for: pid, gpu_uuid,
/// gpu_bus_id, used_gpu_memory (no process name: the fd pass's details name
/// the process; the pid comes first so the script can read it).
const std::vector<std::string>& ScanAppsFields();

/// The per-GPU fallback when the whole-host query failed on a lost GPU:
/// the GPU query with -i N for each index, each bounded by "timeout".
/// Prints "pgpu N RC:TEXT" per index, then "end".
std::string PerGpuQueryScript(const std::vector<int>& indexes, std::chrono::milliseconds timeout);

// ---------------------------------------------------------------- units

/// Stops each unit with "systemctl stop", each bounded by "timeout". Prints
/// "stop I RC" per unit, I being its index in "units", then (with
/// "audit"'s run id) "audit N RC" for the lines "action=stop_unit unit=U
/// rc=RC", then "end". The stops followed by a signal wave in one round
/// trip: round_trips.h.
std::string StopUnitsScript(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout,
                            const AuditRequest& audit = AuditRequest());

// ---------------------------------------------------------------- signals

/// Reads the targets' fds and mappings afresh (the fd and maps passes
/// limited to them), then sends "signal" ("TERM" or "KILL") to each target
/// whose start time still matches, that is not a zombie, and that still
/// holds an NVIDIA device file, by an fd of any thread or a mapping (also
/// a target that only nvidia-smi named, needs_fd false), through a pidfd
/// where the host has perl and the kernel pidfds; then waits on the host until every target is gone
/// or "wait" has passed, looking at the targets every 10 ms for the first second and every "poll"
/// after it (one sleep per look: a wait of W seconds past its first starts at most 100 + W / poll
/// processes). A process whose every thread has exited (a zombie waiting for its reaper) is gone:
/// it has closed its files, and the verify proves its memory; a leader in state Z whose other
/// threads run is present. Prints "signal 1", "now TICKS" (the host's clock at the signals, in the
/// unit of process start times), "sent PID", "gone PID" (never signalled:
/// exited, reused, or no longer holding a device), "failed PID" (kill
/// refused), then, with "audit"'s run id and a signal sent, "audit N RC"
/// (the line "action=term|kill" and the target's fields of
/// audit.targets, or pid and start, for each signal sent, handed to one
/// logger before the wait), then "left PID STATE" for each target signalled and still
/// present (never a zombie), "parent PID" (see below), "done CS" (centiseconds from the
/// signals to the end of the wait), "end".
/// With "parents" (the targets' parents), also "parent PID" for each of
/// them still alive (not a zombie) at the end: a dead parent restarts nothing, so the
/// respawn watch can let it go.
/// With "scan_start" (the clock of the scan that found the targets,
/// ScanOutput::clock), a target whose start time is not before it was born
/// while that scan ran (its PID may be a reused one that the scan paired
/// with an older nvidia-smi answer): it is "gone", never signalled, and the
/// next scan, which started after it, may target it.
std::string SignalScript(const std::string& signal, const std::vector<Target>& targets,
                         std::chrono::milliseconds wait, std::chrono::milliseconds poll,
                         const HostPaths& paths = HostPaths(), const std::vector<int>& parents = {},
                         const AuditRequest& audit = AuditRequest(), uint64_t scan_start = 0);

// ---------------------------------------------------------------- /dev/shm

/// Removes each regular file directly in /dev/shm whose name matches one of
/// "patterns" (find -name globs) unless its inode is open or mapped by any
/// process (read right before the removal, by inode on /dev/shm's device,
/// whatever the file's name holds). Symlinks and directories are never
/// followed or removed; nothing outside /dev/shm is reached. With "dry_run"
/// nothing is removed. Prints "shm 1", then "removed:NAME", "would:NAME",
/// "inuse:NAME" or "failed:NAME" per match, then "shmerr:TEXT" (find's
/// error lines, which say why a removal failed) when find printed any, then
/// (with "audit"'s run id and a file removed) "audit N RC" for the lines
/// "action=shm_remove file=PATH", then "end" (ParseShmOutput). With a scan
/// in the same round trip: round_trips.h. Under a scope "selection" lists
/// the only files that are candidates at all, by inode and the owner's uid
/// each must still have (the segments of the holders the run signalled);
/// the others matching "patterns" are neither read nor listed.
std::string ShmCleanScript(const std::vector<std::string>& patterns, bool dry_run,
                           const HostPaths& paths = HostPaths(),
                           const AuditRequest& audit = AuditRequest(),
                           const ShmSelection& selection = ShmSelection());

// ---------------------------------------------------------------- reset

/// Runs "nvidia-smi --gpu-reset -i N" for each GPU in turn, each only when
/// "nvidia-smi --query-compute-apps=pid -i N" (bounded by "query_timeout")
/// exits 0 and lists no process; else prints "busy N RC:PIDS" for it. With
/// "units" (the units of the daemons that hold the GPUs: NVIDIA's procedure)
/// a guard starts first, in a session of its own, that starts the units
/// again once the script's shell has ended, however it ended (the step's
/// bound, Ctrl-C, a dropped connection); "guard RC:" says whether it runs,
/// and nothing is stopped when it does not. Then "systemctl stop" of the
/// units ("stop RC:TEXT") and their states ("stopped RC:STATES"); the resets
/// run only when the stop exited 0 and every unit reads inactive or failed.
/// Then "systemctl start" ("start RC:TEXT") and "systemctl is-active"
/// ("active RC:STATES", one state a line, in the units' order), each one
/// call bounded by "unit_timeout" (10 s for is-active), and the guard ends.
/// Then (with "audit"'s run id) "audit N RC" for the lines
/// "action=stop_unit|gpu_reset|start_unit ...", then "end".
std::string GpuResetScript(const std::vector<int>& gpus, std::chrono::milliseconds per_gpu,
                           const std::vector<std::string>& units = {},
                           std::chrono::milliseconds unit_timeout = std::chrono::seconds(30),
                           const AuditRequest& audit = AuditRequest(),
                           std::chrono::milliseconds query_timeout = std::chrono::seconds(30));

}  // namespace fleetreap
