// TimeFormat: how the program writes instants and lengths of time as text:
// UTC timestamps for logs and reports, and seconds in the forms that
// timeout(1), tail -s, JUnit and people read. Each formatter keeps its own
// rounding on purpose (timeout rounds up; the others print fractions).
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace fleetreap {

/// "2026-11-30T03:04:05.678Z": UTC, millisecond precision.
std::string FormatUtcTimestamp(std::chrono::system_clock::time_point time);

/// Whole seconds for timeout(1), rounded up, at least one: 1001 ms -> "2",
/// 0 ms -> "1". (busybox's timeout takes no fractions.)
std::string TimeoutSeconds(std::chrono::milliseconds duration);

/// Seconds with three decimals for tail -s, at least 10 ms: 150 ms -> "0.150".
std::string FractionalSeconds(std::chrono::milliseconds duration);

/// Seconds with three decimals, as printf's "%.3f" rounds: 1234 ms -> "1.234".
std::string FormatSecondsMillis(std::chrono::milliseconds duration);

/// Seconds with one decimal and a unit, as printf's "%.1f s" rounds:
/// 1250 ms -> "1.2 s".
std::string FormatSeconds(std::chrono::milliseconds duration);

}  // namespace fleetreap
