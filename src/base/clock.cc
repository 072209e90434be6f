#include "fleetreap/base/clock.h"

#include <thread>

namespace fleetreap {

namespace {

class SystemClock : public Clock {
 public:
  std::chrono::steady_clock::time_point Now() override { return std::chrono::steady_clock::now(); }
  void SleepFor(std::chrono::milliseconds duration) override {
    std::this_thread::sleep_for(duration);
  }
};

}  // namespace

Clock& RealClock() {
  static SystemClock clock;
  return clock;
}

}  // namespace fleetreap
