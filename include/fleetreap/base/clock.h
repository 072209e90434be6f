// Clock: the program's one source of time: "now" for deadlines and
// durations (steady), "now" for timestamps people read (wall), and waiting.
// Everything that reads time takes a Clock&, so tests pass a fake that
// advances on SleepFor and settle periods cost nothing. RealClock() is
// thread-safe; a fake must be safe to share when its test shares it.
#pragma once

#include <chrono>

namespace fleetreap {

class Clock {
 public:
  virtual ~Clock() = default;
  virtual std::chrono::steady_clock::time_point Now() = 0;
  /// Wall-clock time, for timestamps in logs and reports.
  virtual std::chrono::system_clock::time_point WallNow() {
    return std::chrono::system_clock::now();
  }
  virtual void SleepFor(std::chrono::milliseconds duration) = 0;
};

/// steady_clock and system_clock; SleepFor is fiber.h's SleepUntil (in a
/// fiber only that fiber waits, elsewhere the thread sleeps). Thread-safe.
Clock& RealClock();

}  // namespace fleetreap
