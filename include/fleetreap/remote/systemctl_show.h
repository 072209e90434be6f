// SystemctlShow: reads what `systemctl show -p
// Id,ActiveState,Restart,RestartUSec,KillMode,ControlGroup,MainPID
// UNIT...` printed in a scan into model/unit_properties.h values, and which
// of the playbook's units it found active. Pure functions of text;
// thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/model/unit_properties.h"

namespace fleetreap {

/// Parses `systemctl show -p Id,... UNIT...`: blocks of KEY=VALUE lines
/// separated by blank lines, each with an Id. Blocks without an Id, and
/// lines that are not KEY=VALUE, are skipped: a unit the host does not
/// know has no properties.
std::map<std::string, UnitProperties> ParseSystemctlShow(const std::string& text);

/// The playbook's active units among the blocks of the same text: the Ids
/// that match one of "patterns" as systemd matches unit names (fnmatch
/// without escapes) and whose ActiveState is active, each once, in the
/// order list-units lists units (by type, then by name, case ignored): what
/// `systemctl list-units --state=active -- PATTERN...` listed. A block of
/// a unit not found (LoadState=not-found) is inactive.
std::vector<std::string> ActiveUnitsShown(const std::string& text,
                                          const std::vector<std::string>& patterns);

/// True when "name" is 1 or more of A-Za-z0-9:_.@- (no glob, no escape,
/// nothing a shell splits): a name the scan passes to systemctl as a word.
bool IsPlainUnitName(const std::string& name);

}  // namespace fleetreap
