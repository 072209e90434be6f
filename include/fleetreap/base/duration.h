// Duration: parses the human durations used on the command line and in
// playbooks ("10s", "250ms", "1.5s", "2m", a bare number of seconds).
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>

namespace fleetreap {

/// Parses "text" into "*out". Returns false, leaving "*out" alone, when the
/// text is not a non-negative duration with an optional unit ms, s, m or h.
bool ParseDuration(const std::string& text, std::chrono::milliseconds* out);

}  // namespace fleetreap
