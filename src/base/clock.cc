#include "fleetreap/base/clock.h"

#include "fleetreap/base/fiber.h"

namespace fleetreap {

namespace {

class SystemClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  void SleepFor(std::chrono::milliseconds duration) override {
    // In a fiber only that fiber waits; elsewhere the thread sleeps.
    SleepUntil(std::chrono::steady_clock::now() + duration);
  }
};

}  // namespace

Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

}  // namespace fleetreap
