// Subprocess: one child process run as "/bin/sh -c SCRIPT" in a process
// group of its own (optionally a session of its own), and ended with that
// whole group. It holds the one policy LocalTransport and ProxyCommand share:
// the child starts with an empty signal mask, default SIGPIPE and no
// inherited fds past 0-2; the leader is left unreaped (waitid WNOWAIT) until
// its group has been signalled for the last time, so its PID, the group's
// ID, cannot be reused by an unrelated process in between; stopping is TERM,
// a grace period, KILL, reap. One object per child, used by one thread; not
// thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// How to start a Subprocess.
struct SubprocessSpec {
  /// Leaves a standard stream as this process has it.
  static constexpr int kInherit = -1;
  /// Connects a standard stream to /dev/null.
  static constexpr int kDevNull = -2;

  std::string script;  // run as /bin/sh -c SCRIPT
  int stdin_fd = kInherit;
  int stdout_fd = kInherit;
  int stderr_fd = kInherit;
  /// The child's environment; null: this process's.
  const std::vector<std::string>* environment = nullptr;
  /// setsid(): no controlling terminal to prompt on. Otherwise only a
  /// process group of its own (setpgid), still on this terminal's session.
  bool new_session = false;
};

class Subprocess {
 public:
  Subprocess() = default;
  /// A child still running is killed with its group and reaped.
  ~Subprocess();
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;

  /// Forks and execs. Errors are kInternal: "fork: Resource temporarily
  /// unavailable". The caller closes its copies of the child's fds.
  Status Start(const SubprocessSpec& spec);

  /// True between a successful Start and the reap.
  bool running() const { return pid_ > 0; }
  pid_t pid() const { return pid_; }

  /// Has the leader ended? Leaves it unreaped (a zombie keeps its PID).
  bool Ended() const;

  /// Sends "signal_number" to the child's whole process group; nothing once
  /// it is reaped.
  void SignalGroup(int signal_number);

  /// Waits for the leader and reaps it; "*wait_status" (may be null) gets
  /// waitpid's status. False when there was nothing to reap.
  bool Reap(int* wait_status);

  /// TERM to the group unless the leader has ended, up to "grace" for the
  /// leader to end, KILL to whatever is left in the group, then the reap.
  /// Nothing when nothing runs; "*wait_status" as for Reap.
  void Stop(std::chrono::milliseconds grace, int* wait_status = nullptr);

 private:
  pid_t pid_ = -1;
};

}  // namespace fleetreap
