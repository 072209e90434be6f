#include "fleetreap/base/time_format.h"

#include <cstdio>
#include <ctime>

namespace fleetreap {

std::string FormatUtcTimestamp(std::chrono::system_clock::time_point time) {
  auto since_epoch = time.time_since_epoch();
  auto seconds = std::chrono::floor<std::chrono::seconds>(since_epoch);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds);
  std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buffer[40];
  std::strftime(buffer, sizeof(buffer), "%Y-%m-%dT%H:%M:%S", &utc);
  char out[48];
  std::snprintf(out, sizeof(out), "%s.%03dZ", buffer, static_cast<int>(millis.count()));
  return out;
}

std::string TimeoutSeconds(std::chrono::milliseconds duration) {
  long long seconds = (duration.count() + 999) / 1000;
  return std::to_string(seconds < 1 ? 1 : seconds);
}

std::string FractionalSeconds(std::chrono::milliseconds duration) {
  long long ms = duration.count() < 10 ? 10 : duration.count();
  std::string frac = std::to_string(1000 + ms % 1000).substr(1);
  return std::to_string(ms / 1000) + "." + frac;
}

std::string FormatSecondsMillis(std::chrono::milliseconds duration) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.3f", static_cast<double>(duration.count()) / 1000.0);
  return buffer;
}

std::string FormatSeconds(std::chrono::milliseconds duration) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.1f s", static_cast<double>(duration.count()) / 1000.0);
  return buffer;
}

}  // namespace fleetreap
