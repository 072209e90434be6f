// LocalTransport: the Transport for --local. It runs each command on this
// machine with /bin/sh -c, in a process group of its own (subprocess.h),
// with stdout and stderr drained together by poll(), each up to its limit
// (command_output.h); when the deadline passes the whole group gets SIGTERM,
// then SIGKILL after a short grace. No SSH is involved, so a
// Slurm epilog, a Kubernetes DaemonSet or any other scheduler can run the same
// escalation on the node it is on.
// Like every Transport it is used by one thread at a time; not thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "fleetreap/transport/command_output.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

class LocalTransport : public Transport {
 public:
  /// Each stream is kept up to its limit (command_output.h); past it the
  /// command is stopped and the result is kOutputLimit.
  explicit LocalTransport(OutputLimits limits = OutputLimits());

  /// Nothing to open: always Ok.
  Status Connect(std::chrono::steady_clock::time_point not_after) override;

  /// Runs "command" with /bin/sh -c as given (callers bound the command with
  /// BoundedCommand as they do for a remote host). After "timeout" the process
  /// group is sent SIGTERM, and SIGKILL one grace period later; the result is
  /// then kTimedOut. A stream past its limit stops the command the same way
  /// at once (its pipes closed first, so its next write fails): kOutputLimit.
  /// A command killed by a signal ends as kSignaled with the signal's name
  /// ("KILL"). A fork or pipe failure ends as kNotStarted.
  CommandResult Run(const std::string& command, std::chrono::milliseconds timeout) override;

  void Close() override {}
  std::string Describe() const override { return "local"; }

 private:
  OutputLimits limits_;
};

/// "TERM" for SIGTERM, "KILL" for SIGKILL; the number as text when unknown.
std::string SignalName(int signal_number);

}  // namespace fleetreap
