// FleetObserver: how the fleet runner tells the outside world what happens,
// so that the runner itself never prints. The progress line, the per-host CI
// lines and the logs implement it. Every call comes from the one thread that
// called RunFleet (the workers hand their events to it), one at a time:
// implementations need no locking for these calls.
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
    (void)host;
    (void)attempt;
    (void)why;
  }
  /// "host" began a step of its ladder: "step" says what it does and may
  /// wait for ("term 8 pids, up to 10.0 s"; StepBrief in step_log.h).
  virtual void HostStep(const Host& host, const std::string& step) {
    (void)host;
    (void)step;
  }
  /// "host" is finished; "report" is final. It may be dropped once this
  /// returns (FleetSettings::keep_host_reports): copy what is needed.
  virtual void HostFinished(const HostReport& report) { (void)report; }
  /// The stop flag was seen set (Ctrl-C): no new host starts. Called at most
  /// once, between RunStarted and RunFinished.
  virtual void Interrupted() {}
  /// About every 250 ms while the run goes on, for a clock on screen.
  virtual void Tick() {}
  /// Every host is finished or was never started (interrupted, deadline).
  virtual void RunFinished() {}
};

}  // namespace fleetreap
