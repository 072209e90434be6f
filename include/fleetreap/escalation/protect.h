// Protect: decides which GPU holders fleetreap must never signal, whatever the
// playbook says: PID 1, kernel threads (by the kernel's PF_KTHREAD flag),
// the processes of fleetreap's own SSH session and their ancestors (and
// children), the daemons of the protected list, and the daemons whose
// root-owned PID file names them.
//
// A list entry matches the executable (/proc/PID/exe): an entry with a '/'
// is a glob on the whole path, one without a glob on its last component.
// A match counts only when a user could not have made it: the file is owned
// by root and writable by no one else, and (for a name entry) lies under
// /usr, /opt, /bin, /sbin or /nix/store as the process sees its root (a container's
// image included). A process that matches by name alone is "named like" the
// daemon and is a job: it may be signalled, and the report says so.
// argv[0] and the 15-character comm are never trusted; when the exe cannot
// be read (fleetreap without root) the comm is used, only to protect.
// Value type; const methods are thread-safe.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "fleetreap/model/daemon_pid_file.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"

namespace fleetreap {

/// Why a holder is protected, or whose name it only carries.
struct ProtectDecision {
  std::string reason;      // "" when it may be signalled
  std::string named_like;  // the entry it matched by name only, if any
};

class ProtectList {
 public:
  /// The built-in list (docs/protected-daemons.md says what each is):
  /// the driver's daemons, DCGM, the fabric manager and NVLink subnet
  /// manager, IMEX, MPS, vGPU licensing, the Kubernetes GPU operator's
  /// agents, NVSM, display servers, sshd, systemd, nvidia-smi and fuser.
  static ProtectList Default();

  /// Adds an entry (a name or an absolute path, globs allowed). Empty entries
  /// are ignored.
  void Add(const std::string& entry);
  void AddAll(const std::vector<std::string>& entries);

  /// fleetreap's own session on the host: "shell_pid" is the remote shell
  /// that ran the scan (its children, the scan's own tools, are protected
  /// too) and "ancestors" its ancestors (sudo, sshd...), PID 1 excluded.
  void SetSession(int shell_pid, const std::set<int>& ancestors);
  int shell_pid() const { return shell_pid_; }
  const std::set<int>& ancestors() const { return ancestors_; }

  /// The daemons' PID files as the scan read them (DaemonPidFiles() index
  /// -> first line); only root-owned files the scan vouched for are given.
  void SetPidFiles(const std::map<int, std::string>& contents);

  /// Whether "holder" is PID 1, a kernel thread, fleetreap's own session,
  /// or a host daemon: an entry matches its executable (by path, or by name
  /// in a system location), the executable is root's and writable by no
  /// one else, the process runs as root or a system account (uid below
  /// 1000) and its environment sets no LD_PRELOAD or LD_AUDIT. A daemon's
  /// PID file naming it counts as a match when the executable's name is the
  /// daemon's too. An unreadable executable never protects. A holder that
  /// matches an entry by name only is reported named_like: a job.
  ProtectDecision Judge(const Holder& holder) const;

  /// Judge(holder).reason: "pid 1", "kernel thread", "fleetreap session",
  /// the matching entry such as "nvidia-persistenced", "nvidia-persistenced
  /// (pid file)", or "" when it may be signalled.
  std::string Reason(const Holder& holder) const { return Judge(holder).reason; }

  const std::vector<std::string>& entries() const { return entries_; }

 private:
  std::vector<std::string> entries_;
  int shell_pid_ = 0;
  std::set<int> ancestors_;
  std::map<int, std::string> pid_daemons_;  // pid -> daemon, from PID files
};

/// The executable path of "holder" without the " (deleted)" suffix the kernel
/// adds when the file was replaced.
std::string ExePath(const Holder& holder);

/// Whether the holder's executable is root's and writable by no one else.
bool ExeOwnedByRoot(const Holder& holder);

}  // namespace fleetreap
