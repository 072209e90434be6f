#include "fleetreap/base/shell.h"

#include <cstdio>

namespace fleetreap {

std::string ShellQuote(const std::string& value) {
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  quoted += "'";
  return quoted;
}

std::string BoundedCommand(const std::string& script,
                           std::chrono::milliseconds timeout, bool become) {
  // Whole seconds, rounded up, at least one: timeout(1) takes fractions too,
  // but busybox's does not, and a second of slack costs nothing here.
  long long seconds = (timeout.count() + 999) / 1000;
  if (seconds < 1) seconds = 1;
  // sudo runs inside the bound: its own phase (NSS, PAM, hostname lookups)
  // is bounded on the host too.
  return "timeout -k 2 " + std::to_string(seconds) + (become ? " sudo -n" : "") + " sh -c " +
         ShellQuote(script);
}

}  // namespace fleetreap
