// RunObservers: the FleetObservers a run wires besides the progress display:
// ObserverList hands every call to several observers in order,
// JournalObserver appends each host's start and result to the run's Journal
// (journal.h) as they happen, and StreamObserver hands each finished host to
// the run's ReportStream (report_stream.h). Like every FleetObserver they are called from
// the one thread that runs RunFleet; not thread-safe.
#pragma once

#include <cstddef>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

#include "fleetreap/report/journal.h"
#include "fleetreap/report/report_stream.h"
#include "fleetreap/runner/fleet_observer.h"
#include "fleetreap/runner/fleet_plan.h"

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

/// Adds each finished host to "stream" at its place in "plans" (inventory
/// order, whatever order the hosts end in), so that the runner may drop the
/// report (FleetSettings::keep_host_reports). Keeps a map from each host's
/// name to its place. "stream" must outlive it.
class StreamObserver : public FleetObserver {
 public:
  StreamObserver(ReportStream* stream, const std::vector<FleetPlan>& plans);

  void HostFinished(const HostReport& report) override;

 private:
  ReportStream* stream_;
  std::unordered_map<std::string, std::deque<size_t>> places_;  // name: its places not yet ended
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
