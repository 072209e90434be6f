// FakeClock: a Clock for tests. Time stands still until SleepFor or Advance
// moves it, so settle periods and backoffs cost nothing and durations are
// exact. Thread-safe (a fleet runner test shares it between workers); wall
// time starts at 2026-01-01T00:00:00Z and moves with steady time.
#pragma once

#include <chrono>
#include <mutex>

#include "fleetreap/base/clock.h"

namespace fleetreap {

class FakeClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::steady_clock::time_point{} + elapsed_;
  }
  std::chrono::system_clock::time_point WallNow() override {
    std::lock_guard<std::mutex> lock(mu_);
    return std::chrono::system_clock::time_point{std::chrono::seconds(1767225600)} + elapsed_;
  }
  void SleepFor(std::chrono::milliseconds d) override {
    std::lock_guard<std::mutex> lock(mu_);
    elapsed_ += d;
    slept_ += d;
  }
  void Advance(std::chrono::milliseconds d) {
    std::lock_guard<std::mutex> lock(mu_);
    elapsed_ += d;
  }
  std::chrono::milliseconds slept() {
    std::lock_guard<std::mutex> lock(mu_);
    return slept_;
  }

 private:
  std::mutex mu_;
  std::chrono::milliseconds elapsed_{0};
  std::chrono::milliseconds slept_{0};
};

}  // namespace fleetreap
