// RunObservers: the FleetObservers a run wires besides the progress display:
// ObserverList hands every call to several observers in order, and
// JournalObserver appends each host's start and result to the run's Journal
// (journal.h) as they happen. Like every FleetObserver they are called from
// the one thread that runs RunFleet; not thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/report/journal.h"
#include "fleetreap/runner/fleet_observer.h"

namespace fleetreap {

/// Forwards each call to every non-null observer of "observers", in order.
/// The observers must outlive it.
class ObserverList : public FleetObserver {
 public:
  explicit ObserverList(std::vector<FleetObserver*> observers);

  void RunStarted(int total) override;
  void HostStarted(const Host& host) override;
  void HostRetrying(const Host& host, int attempt, const std::string& why) override;
  void HostStep(const Host& host, const std::string& step) override;
  void HostFinished(const HostReport& report) override;
  void Interrupted() override;
  void Tick() override;
  void RunFinished() override;

 private:
  std::vector<FleetObserver*> observers_;
};

/// Writes a "started" line when a host starts and a "finished" line with
/// its whole report when it ends. A write that fails is logged (spdlog
/// error, once) and the run goes on: the final reports are still written.
/// "journal" must outlive it.
class JournalObserver : public FleetObserver {
 public:
  explicit JournalObserver(Journal* journal) : journal_(journal) {}

  void HostStarted(const Host& host) override;
  void HostFinished(const HostReport& report) override;

  /// False once a write failed.
  bool ok() const { return ok_; }

 private:
  void Check(const Status& status);

  Journal* journal_;
  bool ok_ = true;
};

/// -v: logs (spdlog info) each host's start, its connect retries with the
/// reason, and its end with the outcome, the time of each step
/// (DescribeTimings) and the reason (HostReason):
///   gpu01: finished: cleaned: 8 killed (TERM) (10.6 s: connect 0.1 s, inspect 0.3 s, term 10.0 s,
///   rescan+clean_shm+verify 0.2 s): REASON
class HostLogObserver : public FleetObserver {
 public:
  explicit HostLogObserver(bool dry_run) : dry_run_(dry_run) {}

  void HostStarted(const Host& host) override;
  void HostRetrying(const Host& host, int attempt, const std::string& why) override;
  void HostFinished(const HostReport& report) override;

 private:
  bool dry_run_;
};

}  // namespace fleetreap
