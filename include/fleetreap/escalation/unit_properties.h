// Protected units: which of a host's units fleetreap must never stop, by
// name (what `systemctl show` says about a unit is model/unit_properties.h,
// read by remote/systemctl_show.h). Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/model/unit_properties.h"

namespace fleetreap {

/// Why fleetreap must never stop a unit of this name ("sshd's unit",
/// "systemd's own unit", "a protected daemon's unit (nvidia-persistenced)"),
/// or "" when it may. By name alone: the host-side check also looks at what
/// the unit runs.
std::string ProtectedUnitReason(const std::string& unit);

/// The unit names of the protected daemons and the host's way in, for
/// checking a playbook's unit patterns when it loads (fnmatch against each).
const std::vector<std::string>& ProtectedUnitNames();

}  // namespace fleetreap
