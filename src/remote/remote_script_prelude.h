// The shell prelude the remote scripts share, and the duration formats
// they use (remote_script.cc). Internal to remote_script*.cc; pure functions.
#pragma once

#include <chrono>
#include <string>

#include "fleetreap/remote/remote_script.h"

namespace fleetreap {
namespace remote_script_internal {

/// Whole seconds for timeout(1), rounded up, at least one.
std::string Seconds(std::chrono::milliseconds d);

/// Fractional seconds for tail -s: "0.15".
std::string FractionalSeconds(std::chrono::milliseconds d);

/// The functions every script shares (z, add, pst, nvm, fds, dump, q) and
/// their settings for "paths".
std::string Prelude(const HostPaths& paths);

}  // namespace remote_script_internal
}  // namespace fleetreap
