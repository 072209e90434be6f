#include "fleetreap/transport.h"

#include <cstdio>

namespace fleetreap {

const char* CommandEndName(CommandEnd end) {
  switch (end) {
    case CommandEnd::kExited: return "exited";
    case CommandEnd::kSignaled: return "signaled";
    case CommandEnd::kTimedOut: return "timed_out";
    case CommandEnd::kConnectionLost: return "connection_lost";
    case CommandEnd::kNotStarted: return "not_started";
    case CommandEnd::kOutputLimit: return "output_limit";
    case CommandEnd::kNoStatus: return "no_status";
  }
  return "not_started";
}

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

bool IsSudoRefusal(const CommandResult& result) {
  if (result.end != CommandEnd::kExited || result.exit_code != 1) return false;
  const std::string& err = result.err;
  return err.find("sudo: a password is required") != std::string::npos ||
         err.find("sudo: a terminal is required") != std::string::npos ||
         err.find("you must have a tty to run sudo") != std::string::npos ||
         err.find("is not in the sudoers file") != std::string::npos ||
         err.find("is not allowed to run sudo") != std::string::npos ||
         err.find("sudo: command not found") != std::string::npos ||
         err.find("sudo: not found") != std::string::npos;
}

}  // namespace fleetreap
