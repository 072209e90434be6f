// Protect: decides which GPU holders fleetreap must never signal, whatever the
// playbook says: PID 1, kernel threads, the processes of fleetreap's own SSH
// session and their ancestors (and children), and the protected list.
// List entries are matched against the executable (/proc/PID/exe): an entry
// with a '/' is a glob on the whole path, one without is a glob on its last
// component. argv[0] and the 15-character comm are not trusted, since a user
// process can set them; they are used only when the exe cannot be read, and
// then only to protect, never to expose. Value type; const methods are
// thread-safe.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "fleetreap/report.h"

namespace fleetreap {

class ProtectList {
 public:
  /// The built-in list: nvidia-persistenced, nv-hostengine, dcgm-exporter,
  /// nv-fabricmanager, nvidia-fabricmanager, nvidia-imex,
  /// nvidia-cuda-mps-control, nvidia-cuda-mps-server, Xorg, Xwayland, gdm*,
  /// sshd, systemd, nvidia-smi and fuser.
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

  /// Why "holder" must not be signalled ("pid 1", "kernel thread",
  /// "fleetreap session", or the matching entry such as
  /// "nvidia-persistenced"), or "" when it may be.
  std::string Reason(const Holder& holder) const;

  const std::vector<std::string>& entries() const { return entries_; }

 private:
  std::vector<std::string> entries_;
  int shell_pid_ = 0;
  std::set<int> ancestors_;
};

/// The executable path of "holder" without the " (deleted)" suffix the kernel
/// adds when the file was replaced.
std::string ExePath(const Holder& holder);

}  // namespace fleetreap
