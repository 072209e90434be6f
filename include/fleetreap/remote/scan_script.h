// ScanScript: the scan step's scripts, the scan used by inspect, re-scan
// and verify (its reply's grammar: scan_output.h), and the per-GPU query
// after a lost GPU, with that query's parser. The scripts print
// host_records.h records and are meant to be wrapped with BoundedCommand.
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
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/remote/host_paths.h"

namespace fleetreap {

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
/// programs (tests/unit/remote/process_budget_test.cc counts them): find
/// (the fd folders' counts), find, stat and sort for the fd pass, grep, sort
/// and stat for the mappings, timeout and nvidia-smi for the GPU query and
/// for the compute apps (with the holder part both queries run beside each
/// other and beside the fd and mapping walk, their output in a mktemp -d
/// folder read by two cats and removed by rm), three greps and two finds for
/// the details (the first find also reads the PID namespace and the PID
/// files), one systemctl show (the holders' units and the playbook's, which
/// it tells active or not), and with the kernel log dd and grep (the table
/// adds timeout and nvidia-smi). After a /dev/shm listing in the same round
/// trip (BatchScript: listing, then scan) the listing's fd pass is the
/// scan's, and the fd pass starts nothing more. The GPU query asks for
/// ScanGpuFields() in one run; only a driver that names a field it does not
/// know is asked again without that field (three such fields at most), then
/// with the base fields (two processes a run, five runs at most).
/// Prints, in order: "scan 1", "session SHELL ANCESTOR...", "clock TICKS" (the
/// shell's start time: the scan's start), "gpu RC:TEXT", "apps RC:TEXT",
/// "table RC:TEXT", with "readiness"
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
/// up to six more processes), "pidns:LINK", "pidf N:TEXT", "pidmark:TEXT",
/// "selfcg:TEXT" and "owners:UNIT..." (the holders' units); then in every
/// scan "show RC:TEXT" (systemctl show of the owners and the playbook's
/// units; "show -" none to ask, "show 127:" no systemctl) and "end". RC is
/// "-" for a query not run (quick scan, or nvidia-smi already timed out).
std::string ScanScript(const ScanRequest& request, const HostPaths& paths = HostPaths());

/// The fields the scan asks --query-gpu for: GpuQueryFields() then the
/// readiness fields of GpuHealthFields() (gpu_health_query.h) not among them.
const std::vector<std::string>& ScanGpuFields();

/// The arguments that ask nvidia-smi for the PIDs of one GPU's compute
/// processes and nothing else (no header): the GPU reset's last look before
/// it resets a GPU. Built here, beside the scan's own query.
std::string ComputePidsArguments(int gpu);

/// The fields the scan asks --query-compute-apps for: pid, gpu_uuid,
/// gpu_bus_id, used_gpu_memory (no process name: the fd pass's details name
/// the process; the pid comes first so the script can read it).
const std::vector<std::string>& ScanAppsFields();

/// The per-GPU fallback when the whole-host query failed on a lost GPU:
/// the GPU query with -i N for each index, each bounded by "timeout".
/// Prints "pgpu N RC:TEXT" per index, then "end".
std::string PerGpuQueryScript(const std::vector<int>& indexes, std::chrono::milliseconds timeout);

struct PerGpuQuery {
  int index = -1;
  int exit_code = -1;
  std::string out;
};
/// Parses PerGpuQueryScript's stdout.
[[nodiscard]] Status ParsePerGpuQueryOutput(const std::string& out,
                                            std::vector<PerGpuQuery>* queries);

}  // namespace fleetreap
