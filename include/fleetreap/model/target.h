// Target: a process the escalation chose to signal, named so that the remote
// side can tell it from a process that reused its PID. Plain value;
// thread-compatible.
#pragma once

#include <cstdint>

namespace fleetreap {

/// A process to signal, named by PID and the start time it had when seen;
/// the remote side signals it only if the start time still matches.
struct Target {
  int pid = 0;
  uint64_t start_time = 0;
  /// False for a process that only nvidia-smi named (no device file seen by
  /// the scan): "m" in the signal step's transcript. Every target, this one
  /// too, is signalled only while it holds an NVIDIA device file (an fd of
  /// any thread, or a mapping) at the kill.
  bool needs_fd = true;
  bool operator==(const Target& other) const {
    return pid == other.pid && start_time == other.start_time;
  }
};

}  // namespace fleetreap
