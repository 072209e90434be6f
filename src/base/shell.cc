#include "fleetreap/base/shell.h"

#include "fleetreap/base/time_format.h"

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

std::string BoundedCommand(const std::string& script, std::chrono::milliseconds timeout,
                           bool become) {
  // Whole seconds, rounded up, at least one: timeout(1) takes fractions too,
  // but busybox's does not, and a second of slack costs nothing here.
  // sudo runs inside the bound: its own phase (NSS, PAM, hostname lookups)
  // is bounded on the host too.
  return "timeout -k 2 " + TimeoutSeconds(timeout) + (become ? " sudo -n" : "") + " sh -c " +
         ShellQuote(script);
}

}  // namespace fleetreap
