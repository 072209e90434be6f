#include "fleetreap/transport/transport.h"

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
