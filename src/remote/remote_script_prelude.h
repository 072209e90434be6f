// The shell prelude the remote scripts share (remote_script.cc). Internal to
// remote_script*.cc; pure functions. Durations are written with
// base/time_format.h.
#pragma once

#include <string>

#include "fleetreap/remote/remote_script.h"

namespace fleetreap {
namespace remote_script_internal {

/// The functions every script shares (z, add, pst, nvm, fds, dump, q) and
/// their settings for "paths".
std::string Prelude(const HostPaths& paths);

}  // namespace remote_script_internal
}  // namespace fleetreap
