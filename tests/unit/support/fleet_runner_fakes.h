// The fakes of the fleet runner's tests: ScriptedTransport (Connect answers
// from a script), CountingObserver, CleanReport (a cleaner that runs no
// command), Plans(N) and FastSettings (retries without a real wait).
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/runner/fleet_runner.h"

namespace fleetreap {

// A transport whose Connect() answers from a script: one status per attempt,
// the last one repeated. Run() is never expected (the fake cleaner does not run
// commands).
class ScriptedTransport : public Transport {
 public:
  // "seen", when given, receives the deadline of each Connect call.
  explicit ScriptedTransport(std::vector<Status> script,
                             std::chrono::steady_clock::time_point* seen = nullptr)
      : script_(std::move(script)), seen_(seen) {}
  Status Connect(std::chrono::steady_clock::time_point not_after) override {
    if (seen_ != nullptr) *seen_ = not_after;
    Status status = script_[std::min(calls_, script_.size() - 1)];
    ++calls_;
    return status;
  }
  CommandResult Run(const std::string&, std::chrono::milliseconds) override { return {}; }
  void Close() override {}
  std::string Describe() const override { return "scripted"; }

 private:
  std::vector<Status> script_;
  size_t calls_ = 0;
  std::chrono::steady_clock::time_point* seen_;
};

// Counts observer calls (all come from the thread that called RunFleet).
class CountingObserver : public FleetObserver {
 public:
  void RunStarted(int total) override {
    std::lock_guard<std::mutex> lock(mu_);
    total_ = total;
  }
  void HostStarted(const Host&) override { Bump("started"); }
  void HostRetrying(const Host&, int, const std::string&) override { Bump("retrying"); }
  void HostFinished(const HostReport&) override { Bump("finished"); }
  void RunFinished() override { Bump("run_finished"); }
  int count(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    return counts_[what];
  }
  int total() {
    std::lock_guard<std::mutex> lock(mu_);
    return total_;
  }

 private:
  void Bump(const std::string& what) {
    std::lock_guard<std::mutex> lock(mu_);
    ++counts_[what];
  }
  std::mutex mu_;
  std::map<std::string, int> counts_;
  int total_ = -1;
};

inline HostReport CleanReport(Transport&, const HostJob& job) {
  HostReport report;
  report.status = HostStatus::kClean;
  report.timings.push_back({"inspect", std::chrono::milliseconds(1)});
  report.error_message = job.become ? "become" : "";
  return report;
}

inline std::vector<FleetPlan> Plans(int count) {
  std::vector<FleetPlan> plans;
  for (int i = 0; i < count; ++i) {
    FleetPlan plan;
    plan.host.name = "gpu" + std::to_string(i);
    plan.host.address = "10.0.0." + std::to_string(i);
    plan.host.port = 2200 + i;
    plans.push_back(plan);
  }
  return plans;
}

inline FleetSettings FastSettings() {
  FleetSettings settings;
  settings.retry_backoff = std::chrono::milliseconds(1);
  return settings;
}

inline Status Err(ErrorKind kind) { return Status::Error(kind, ErrorKindName(kind)); }

}  // namespace fleetreap
