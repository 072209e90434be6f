// Helpers shared by the config readers. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

namespace fleetreap {
namespace config_internal {

/// ansible.module_utils.parsing.convert_bool.boolean(value, strict=False):
/// y, yes, on, 1, true, t (any case) are true, anything else false.
bool AnsibleBoolean(const std::string& value);

/// "a,b,,c" split at "separator", each part trimmed, empty parts dropped.
std::vector<std::string> SplitList(const std::string& text, char separator);

}  // namespace config_internal
}  // namespace fleetreap
