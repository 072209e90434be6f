// The fan-out's events (private to src/runner/): what a worker tells
// the thread that called RunFleet (a host started, retried, entered a step,
// finished), the queue that carries them, and how the hosts' result slots
// become a report (RunFleet's and RunWaves'). EventQueue is thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/runner/fleet_plan.h"
#include "fleetreap/runner/fleet_runner.h"

namespace fleetreap {
namespace fleet_runner_internal {

// What a worker tells the collecting thread. A finished host's report is in
// its result slot, written before the event is pushed.
struct Event {
  enum class Kind { kStarted, kRetrying, kStep, kFinished };
  Kind kind;
  size_t index;
  int attempt = 0;
  std::string why;
};

// Workers push, the thread that called RunFleet takes. Thread-safe.
class EventQueue {
 public:
  explicit EventQueue(size_t workers) : workers_left_(workers) {}

  void Push(Event event) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      events_.push_back(std::move(event));
    }
    changed_.notify_one();
  }

  void WorkerDone() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      --workers_left_;
    }
    changed_.notify_one();
  }

  // Waits up to "timeout" for an event, then moves every queued event into
  // "*out". Returns false once every worker is done and nothing is left.
  bool Take(std::chrono::milliseconds timeout, std::deque<Event>* out) {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait_for(lock, timeout, [this] { return !events_.empty() || workers_left_ == 0; });
    out->swap(events_);
    events_.clear();
    return !out->empty() || workers_left_ > 0;
  }

 private:
  std::mutex mu_;
  std::condition_variable changed_;
  std::deque<Event> events_;
  size_t workers_left_;
};

// The reports of "results" (one slot per plan) moved into report.hosts in
// the plans' order; a plan whose slot is empty is in report.not_started.
inline void PlaceResults(const std::vector<FleetPlan>& plans,
                         std::vector<std::optional<HostReport>>* results, RunReport* report) {
  for (size_t i = 0; i < plans.size(); ++i) {
    if ((*results)[i].has_value()) {
      report->hosts.push_back(std::move(*(*results)[i]));
    } else {
      report->not_started.push_back(plans[i].host.name);
    }
  }
}

}  // namespace fleet_runner_internal
}  // namespace fleetreap
