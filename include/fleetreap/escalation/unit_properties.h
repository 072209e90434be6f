// UnitProperties: what `systemctl show -p Id,Restart,ControlGroup,MainPID`
// says about a host's units, and which units fleetreap must never stop.
// Pure functions of text; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace fleetreap {

struct UnitProperties {
  std::string restart;        // "no", "always", "on-failure"...
  std::string control_group;  // "/system.slice/vllm.service"
  int main_pid = 0;
};

/// Parses `systemctl show -p Id,... UNIT...`: blocks of KEY=VALUE lines
/// separated by blank lines, each with an Id. Blocks without an Id, and
/// lines that are not KEY=VALUE, are skipped: a unit the host does not
/// know has no properties.
std::map<std::string, UnitProperties> ParseSystemctlShow(const std::string& text);

/// Why fleetreap must never stop a unit of this name ("sshd's unit",
/// "systemd's own unit", "a protected daemon's unit (nvidia-persistenced)"),
/// or "" when it may. By name alone: the host-side check also looks at what
/// the unit runs.
std::string ProtectedUnitReason(const std::string& unit);

/// The unit names of the protected daemons and the host's way in, for
/// checking a playbook's unit patterns when it loads (fnmatch against each).
const std::vector<std::string>& ProtectedUnitNames();

}  // namespace fleetreap
