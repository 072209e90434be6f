// The shell prelude the remote scripts share (prelude.cc), and the
// end-less pieces the fused round trips are made of. Internal to
// remote_script*.cc; pure functions. Durations are written with
// base/time_format.h.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/remote/remote_script.h"

namespace fleetreap {
namespace remote_script_internal {

/// The functions every script shares (z, add, pst, nvm, fds, dump, q) and
/// their settings for "paths".
std::string Prelude(const HostPaths& paths);

/// StopUnitsScript and ShmCleanScript without their "end" record: the first
/// part of a fused round trip (round_trips.h).
std::string StopUnitsRecords(const std::vector<std::string>& units,
                             std::chrono::milliseconds timeout);
std::string ShmCleanRecords(const std::vector<std::string>& patterns, bool dry_run,
                            const HostPaths& paths);

}  // namespace remote_script_internal
}  // namespace fleetreap
