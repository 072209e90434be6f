// LocalTransport: the Transport for --local. It runs each command on this
// machine with /bin/sh -c, in a process group of its own, with stdout and
// stderr drained together by poll(); when the deadline passes the whole group
// gets SIGTERM, then SIGKILL after a short grace. No SSH is involved, so a
// Slurm epilog, a Kubernetes DaemonSet or any other scheduler can run the same
// escalation on the node it is on.
// Like every Transport it is used by one thread at a time; not thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "fleetreap/transport.h"

namespace fleetreap {

class LocalTransport : public Transport {
 public:
  /// "output_cap" bytes are kept of each stream; the rest is read and dropped
  /// (and the result says it was truncated).
  explicit LocalTransport(size_t output_cap = kDefaultOutputCap);

  /// Nothing to open: always Ok.
  Status Connect(std::chrono::steady_clock::time_point not_after) override;

  /// Runs "command" with /bin/sh -c as given (callers bound the command with
  /// BoundedCommand as they do for a remote host). After "timeout" the process
  /// group is sent SIGTERM, and SIGKILL one grace period later; the result is
  /// then kTimedOut. A command killed by a signal ends as kSignaled with the
  /// signal's name ("KILL"). A fork or pipe failure ends as kNotStarted.
  CommandResult Run(const std::string& command,
                    std::chrono::milliseconds timeout) override;

  void Close() override {}
  std::string Describe() const override { return "local"; }

  static constexpr size_t kDefaultOutputCap = 4 << 20;

 private:
  size_t output_cap_;
};

/// "TERM" for SIGTERM, "KILL" for SIGKILL; the number as text when unknown.
std::string SignalName(int signal_number);

}  // namespace fleetreap
