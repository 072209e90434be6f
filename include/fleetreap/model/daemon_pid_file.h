// DaemonPidFile: where the protected NVIDIA daemons write their PIDs. Every
// scan reads these files (remote/scan_script.h) and protection checks a
// holder against what they said (escalation/protect.h). Constant data;
// thread-safe.
#pragma once

#include <string>
#include <vector>

namespace fleetreap {

/// A PID file a protected daemon writes ("/var/run/nvidia-persistenced/
/// nvidia-persistenced.pid"), and the daemon's name.
struct DaemonPidFile {
  std::string daemon;
  std::string path;
};

/// The PID files read by every scan, in a fixed order (the scan reports
/// them by index).
const std::vector<DaemonPidFile>& DaemonPidFiles();

}  // namespace fleetreap
