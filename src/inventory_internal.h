// Internals shared by the inventory loaders: variables as the loaders hold
// them before resolution, the rules for the variables fleetreap reads (types,
// aliases, how they become Host fields), and the YAML probe that decides
// between the YAML and the plain-list loader. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/host.h"
#include "fleetreap/status.h"

namespace fleetreap {
namespace inventory_internal {

struct Variable {
  enum class Kind { kNull, kScalar, kList, kMap };
  Kind kind = Kind::kNull;
  std::string text;                // the scalar, or flow YAML for lists and maps
  std::vector<std::string> items;  // a list's scalar items
  std::string where;               // "FILE:LINE:COL" of the value
};

/// Variables of one scope (a group or a host), by name.
using Variables = std::map<std::string, Variable>;

/// Checks a variable fleetreap reads against its type; others pass. "scope"
/// names the definer for the message, e.g. `host "gpu03"` or `group "rack1"`.
/// Returns kInvalidInput "WHERE: SCOPE: NAME must be ..., got ..." on error.
Status CheckVariable(const std::string& scope, const std::string& name,
                     const Variable& value);

/// True for the variables whose conflicting definitions deserve a warning:
/// connection variables (either spelling) and fleetreap_* settings.
bool IsSettingVariable(const std::string& name);

/// Fills "host"'s connection and fleetreap fields and its vars from the
/// resolved variables (already checked). Relative key-file and playbook paths
/// are joined to "base_dir"; "~/" is expanded with $HOME.
void ApplyVariables(const std::map<std::string, const Variable*>& vars,
                    const std::string& base_dir, Host* host);

/// Validates a host name as the loaders accept it: letters, digits, ".",
/// "_", "-" and ":" (IPv6 literals). Returns an empty string when valid, else
/// the problem.
std::string CheckHostName(const std::string& name);

/// Splits an Ansible host key "name:port" (the colon outside brackets, and
/// only one, so IPv6 literals stay whole). Returns false when there is no port;
/// "*colon" is then npos, else the offset of the colon in "key".
bool SplitHostPort(const std::string& key, std::string* name, std::string* port,
                   size_t* colon);

/// "inventory/lab.yaml" -> "inventory"; "lab.yaml" -> "".
std::string DirectoryOf(const std::string& path);

/// What "text" is as YAML: a mapping (an Ansible inventory), something else
/// (a scalar or list: read it as a plain host list), or not YAML at all.
enum class YamlShape { kMapping, kOther, kSyntaxError };
YamlShape ProbeYaml(const std::string& text);

}  // namespace inventory_internal
}  // namespace fleetreap
