// SystemctlShow: reads what `systemctl show -p
// Id,Restart,RestartUSec,KillMode,ControlGroup,MainPID
// UNIT...` printed in a scan into model/unit_properties.h values. Pure
// function of text; thread-safe.
#pragma once

#include <map>
#include <string>

#include "fleetreap/model/unit_properties.h"

namespace fleetreap {

/// Parses `systemctl show -p Id,... UNIT...`: blocks of KEY=VALUE lines
/// separated by blank lines, each with an Id. Blocks without an Id, and
/// lines that are not KEY=VALUE, are skipped: a unit the host does not
/// know has no properties.
std::map<std::string, UnitProperties> ParseSystemctlShow(const std::string& text);

}  // namespace fleetreap
