// ChildProcess: a process of the respawn watch, either a child of a watched
// parent (a signalled holder's parent) or, with "parent" 0, a watched parent
// itself. Part of the host model that a scan fills and the escalation's
// respawn watch reads. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <string>

namespace fleetreap {

/// A child of a watched parent (escalation.h's respawn watch); with "parent"
/// 0, a watched parent that a scan saw alive.
struct ChildProcess {
  int parent = 0;
  int pid = 0;
  uint64_t start_time = 0;  // clock ticks since boot
  std::string comm;
};

}  // namespace fleetreap
