#include "fleetreap/cli/run_observers.h"

#include <spdlog/spdlog.h>

#include <utility>

#include "fleetreap/base/time_format.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/step_times.h"

namespace fleetreap {

ObserverList::ObserverList(std::vector<FleetObserver*> observers)
    : observers_(std::move(observers)) {}

void ObserverList::RunStarted(int total) {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->RunStarted(total);
  }
}

void ObserverList::HostStarted(const Host& host) {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->HostStarted(host);
  }
}

void ObserverList::HostRetrying(const Host& host, int attempt, const std::string& why) {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->HostRetrying(host, attempt, why);
  }
}

void ObserverList::HostStep(const Host& host, const std::string& step) {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->HostStep(host, step);
  }
}

void ObserverList::HostFinished(const HostReport& report) {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->HostFinished(report);
  }
}

void ObserverList::Interrupted() {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->Interrupted();
  }
}

void ObserverList::Tick() {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->Tick();
  }
}

void ObserverList::RunFinished() {
  for (FleetObserver* o : observers_) {
    if (o != nullptr) o->RunFinished();
  }
}

void JournalObserver::HostStarted(const Host& host) { Check(journal_->Started(host.name)); }

void JournalObserver::HostFinished(const HostReport& report) { Check(journal_->Finished(report)); }

void JournalObserver::Check(const Status& status) {
  if (status.ok() || !ok_) return;
  ok_ = false;
  spdlog::error("journal: {}; the run goes on, the final reports are still written",
                status.message());
}

StreamObserver::StreamObserver(ReportStream* stream, const std::vector<FleetPlan>& plans)
    : stream_(stream) {
  for (size_t i = 0; i < plans.size(); ++i) places_[plans[i].host.name].push_back(i);
}

void StreamObserver::HostFinished(const HostReport& report) {
  auto it = places_.find(report.name);
  if (it == places_.end() || it->second.empty()) return;  // not a selected host: none such
  const size_t index = it->second.front();
  it->second.pop_front();
  if (it->second.empty()) places_.erase(it);
  stream_->Add(index, report);
}

void HostLogObserver::HostStarted(const Host& host) {
  const std::string user = host.user.empty() ? "" : host.user + "@";
  spdlog::info("{}: started: connect to {}{}:{}", host.name, user,
               host.address.empty() ? host.name : host.address, host.port);
}

void HostLogObserver::HostRetrying(const Host& host, int attempt, const std::string& why) {
  spdlog::info("{}: connect attempt {} follows: {}", host.name, attempt, why);
}

void HostLogObserver::HostFinished(const HostReport& report) {
  const HostOutcome outcome = OutcomeOf(report, dry_run_);
  const std::string reason = HostReason(report, dry_run_);
  const std::string steps = DescribeTimings(report);
  spdlog::info("{}: finished: {}: {} ({}{}){}", report.name, OutcomeKindLabel(outcome.kind),
               outcome.detail, FormatSeconds(report.duration), steps.empty() ? "" : ": " + steps,
               reason.empty() ? "" : ": " + reason);
}

}  // namespace fleetreap
