// FleetObserver: how the fleet runner tells the outside world what happens,
// so that the runner itself never prints. The progress line, the per-host CI
// lines and the logs implement it. Calls come from worker threads, possibly
// at the same time: implementations must be thread-safe.
#pragma once

#include <string>

#include "fleetreap/inventory/host.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

class FleetObserver {
 public:
  virtual ~FleetObserver() = default;
  /// "total" hosts selected; called once, before any host starts.
  virtual void RunStarted(int total) { (void)total; }
  /// A worker picked up "host".
  virtual void HostStarted(const Host& host) { (void)host; }
  /// A transient connection error; attempt "attempt" will follow after a backoff.
  virtual void HostRetrying(const Host& host, int attempt, const std::string& why) {
    (void)host; (void)attempt; (void)why;
  }
  /// "host" is finished; "report" is final.
  virtual void HostFinished(const HostReport& report) { (void)report; }
  /// Every host is finished or was never started (interrupted, deadline).
  virtual void RunFinished() {}
};

}  // namespace fleetreap
