// ScanOutput: the scan's reply (ScanScript, scan_script.h) as the host
// printed it, and its parser, which accepts exactly the scan's record
// grammar: a missing, unknown, repeated or trailing record is a kParse
// error naming the record, and so is output cut short. scan.h reads a
// ScanOutput into a HostSnapshot. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/process_tree.h"
#include "fleetreap/model/shm_file.h"

namespace fleetreap {

/// An open file descriptor on an NVIDIA device file, of any of the process's
/// threads, or a mapping of one (mapped, fd -1): by device number
/// (major >= 0) for a character device, else by path (a plain file named
/// like an NVIDIA node, as on the simulated hosts).
struct DeviceFd {
  int pid = 0;
  int fd = 0;
  int major = -1;
  int minor = -1;
  std::string path;
  bool mapped = false;
};

/// What a scan read about one process, raw: parsed by proc_scan.h.
struct ProcessText {
  std::string stat;  // "" when it was gone
  std::string status;
  std::vector<std::string> argv;  // cmdline split at NULs
  bool has_exe = false;
  std::string exe;         // the link's target
  std::string cgroup;      // /proc/PID/cgroup
  int exe_uid = -1;        // the executable file's owner and mode
  int exe_mode = -1;       // (through the link), -1 unknown
  bool preloaded = false;  // /proc/PID/environ sets LD_PRELOAD or LD_AUDIT
};

/// A /dev/shm file a process held when the scan read it (by inode).
struct ShmHold {
  int pid = 0;
  ShmFile file;
};

struct ScanOutput {
  int shell_pid = 0;
  uint64_t clock = 0;          // the scan shell's start time (ticks): the scan's start; 0 unknown
  std::vector<int> ancestors;  // parent first, PID 1 excluded
  std::string nvidia_smi_out;  // stdout and stderr together
  int nvidia_smi_exit = -1;    // 124: timed out, 127: not found
  bool holders = false;        // the holder part ran
  std::string apps_out;
  int apps_exit = -1;                 // -1: not run
  std::string table_out;              // plain nvidia-smi (ScanRequest::table)
  int table_exit = -1;                // -1: not run
  std::map<int, std::string> majors;  // NVIDIA character majors: 195 "nvidia"...
  std::vector<DeviceFd> fds;
  std::map<std::string, int> minors;     // device minor by bus id
  std::map<int, ProcessText> processes;  // by PID
  std::string passwd;                    // /etc/passwd, for user names
  std::vector<ChildProcess> children;    // of the watched parents
  std::vector<ChildProcess> parents;     // the watched parents (pid 0, comm)
  /// Watched parents whose children the kernel does not list (no
  /// /proc/PID/task/*/children: a kernel without CONFIG_PROC_CHILDREN).
  std::vector<int> children_unlisted;
  /// Holders of control devices only (nvidiactl, nvidia-uvm...) that
  /// nvidia-smi charges nothing, left out past the scan's cap ("ctl N"):
  /// no records, no details; 0 when none was left out.
  int control_only_left_out = 0;
  /// The holder walk could not run ("blind": its perl failed or died, or a
  /// find or grep over /proc did not start, such as on an argument list too
  /// long): holders unseen.
  bool holder_walk_failed = false;
  std::string pid_namespace;             // "pid:[4026531836]", "" unknown
  bool has_pid_marker = false;           // /etc/fleetreap/host-pid-namespace, root's
  std::string pid_marker;                // its first line
  std::map<int, std::string> pid_files;  // DaemonPidFiles() index -> first line
  std::string self_cgroup;               // the scan shell's /proc/self/cgroup
  std::vector<std::string> owner_units;  // the holders' units, which the show was asked for
  /// systemctl show of the holders' units and the playbook's (every scan
  /// that has either), -1 not run, 127 no systemctl.
  int show_exit = -1;
  std::string show_out;
  bool readiness = false;                // the readiness records came
  std::vector<std::string> driver_gpus;  // bus ids under the driver's GPU folder
  int nvswitches = 0;                    // /dev/nvidia-nvswitchN nodes
  int fabric_manager = -1;               // 1 root's runs, 0 not, -1 not looked (no NVSwitch)
  int kmsg_exit = -1;                    // -1 not asked, 0 read, 1 not readable
  std::string kmsg_out;                  // its boot record and Xid lines
  bool shm_read = false;                 // the holders' /dev/shm files were read
  std::vector<ShmHold> shm_holds;        // ScanRequest::shm_files
};

/// Parses ScanScript's stdout.
[[nodiscard]] Status ParseScanOutput(const std::string& out, ScanOutput* scan);

}  // namespace fleetreap
