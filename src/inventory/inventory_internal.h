// Internals shared by the inventory loaders: variables as the loaders hold
// them before resolution, the rules for the variables fleetreap reads (types,
// aliases, how they become Host fields), and the YAML probe that decides
// between the YAML and the plain-list loader. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/inventory/inventory.h"

namespace fleetreap {
namespace inventory_internal {

struct Variable {
  enum class Kind { kNull, kScalar, kList, kMap };
  Kind kind = Kind::kNull;
  std::string text;                // the scalar, or flow YAML for lists and maps
  std::vector<std::string> items;  // a list's scalar items
  std::string where;               // "FILE:LINE:COL" of the value
  bool vault = false;              // an inline "!vault |" value: encrypted
};

/// Asks an inventory script for one host's variables (`SCRIPT --host NAME`):
/// fills "*text" with what it printed.
using ScriptHostVars = std::function<Status(const std::string& host, std::string* text)>;

/// Variables of one scope (a group or a host), by name.
using Variables = std::map<std::string, Variable>;

/// An inventory as written, before resolution: groups with their own
/// variables and children, hosts with their own variables and direct groups.
struct RawGroup {
  Variables vars;                                             // from the inventory file
  Variables file_vars;                                        // from group_vars/ beside it
  std::vector<std::pair<std::string, std::string>> children;  // name, where
  std::vector<std::string> parents;
  std::vector<size_t> hosts;  // direct hosts, in the order they were added
  std::string where;
  int depth = -1;
  int priority = 1;            // ansible_group_priority
  std::vector<int> ancestors;  // group ids, itself included, by (depth, priority, name)
};

struct RawHost {
  Variables vars;           // from the inventory file
  Variables file_vars;      // from host_vars/ beside it
  std::vector<int> groups;  // direct groups, by id
  std::string source;       // "FILE:LINE"
  std::string base_dir;     // relative key files and playbooks are relative to it
};

struct RawInventory {
  std::string path;                      // every source, ", " between them, for messages
  std::string base_dir;                  // the directory of the source being read
  std::vector<std::string> group_names;  // by id
  std::vector<RawGroup> groups;          // by id
  std::unordered_map<std::string, int> group_ids;
  std::vector<std::string> host_names;  // by id, in order of first appearance
  std::vector<RawHost> hosts;           // by id
  std::unordered_map<std::string, size_t> host_ids;
  std::vector<std::string> notes;  // for -v: variables fleetreap ignores
  // Vault files skipped in group_vars/ and host_vars/, by group or host
  // name: a host that needs a variable they may hold is refused naming them.
  std::map<std::string, std::vector<std::string>> group_vaults, host_vaults;

  /// The id of group "name", adding it (first seen at "where") when new; warns
  /// when the name has characters that --limit patterns cannot select. The
  /// first call also adds "all" and "ungrouped", in Ansible's order.
  int GroupId(const std::string& name, const std::string& where,
              std::vector<std::string>* warnings);

  /// Ansible's add_host: the id of host "name", added (first seen at
  /// "source", with base_dir as it is now) when new, then put directly in group "group" (-1: none).
  /// The port of a host key counts only where the host is new, as in Ansible: "port" (-1: none)
  /// becomes its ansible_port then, at "port_where".
  size_t AddHost(const std::string& name, const std::string& source, int group, int port,
                 const std::string& port_where);

  /// Ansible's add_child: "child" goes below "parent" once.
  void AddChild(int parent, int child, const std::string& where);
};

/// Where a variable fleetreap uses holds a Jinja template ("{{", "{%" or
/// "{#"), the problem to refuse the host with; "" otherwise.
std::string JinjaProblem(const std::string& scope, const std::string& name, const Variable& value);

/// Reads the group_vars/ and host_vars/ in directory "base" ("" is the
/// current one) into the groups' and hosts' file_vars, over what earlier
/// directories gave, as Ansible's host_group_vars plugin finds them: GROUP,
/// GROUP.yml, GROUP.yaml or GROUP.json (the first that exists), or every file
/// in a directory GROUP/ (sorted, recursively, hidden and "~" files
/// skipped). A vault file is skipped (-v notes it) and recorded in
/// group_vaults / host_vaults. Errors name the file.
Status LoadGroupAndHostVars(const std::string& base, RawInventory* raw,
                            std::vector<std::string>* warnings);

/// The loaders proper: each parses one source's "text" (read from "path")
/// into "raw", which may already hold earlier sources (Ansible's
/// InventoryData, shared by every -i). Errors as ParseYamlInventory's.
Status ParseYamlInto(const std::string& text, const std::string& path, RawInventory* raw,
                     std::vector<std::string>* warnings);
Status ParseIniInto(const std::string& text, const std::string& path, RawInventory* raw,
                    std::vector<std::string>* warnings);

/// ParseYamlInventory and ParseIniInventory: one source's text parsed
/// alone, its group_vars/ and host_vars/ read, resolved into "inventory".
Status ParseSingleSource(const std::string& text, const std::string& path, bool yaml,
                         Inventory* inventory, std::vector<std::string>* warnings,
                         std::vector<std::string>* notes);

/// What an inventory script prints for --list (and ansible-inventory --list):
/// read as ansible-core's script plugin reads it, into "raw". "host_vars" is
/// asked for each host's variables (`SCRIPT --host NAME`) when the output has
/// no _meta.hostvars; null refuses such output. Errors name "path".
Status ParseScriptOutputInto(const std::string& text, const std::string& path,
                             const ScriptHostVars* host_vars, RawInventory* raw,
                             std::vector<std::string>* warnings);

/// Whether YAML "text" is an inventory plugin's configuration: a mapping
/// with a "plugin" key, whose value goes to "*plugin".
bool YamlPluginName(const std::string& text, std::string* plugin);

/// Whether "text" is what ansible-inventory --list prints (JSON, or YAML):
/// a mapping with a "_meta" entry holding "hostvars". Ansible's own yaml
/// plugin cannot read it; fleetreap reads it as a script's output.
bool IsInventoryListOutput(const std::string& text);

/// A comma-separated host list ("gpu01,gpu02:2222,"), as the host_list
/// plugin reads it: each name once, in "ungrouped".
Status ParseHostListInto(const std::string& list, RawInventory* raw,
                         std::vector<std::string>* warnings);

/// Reads the variables of YAML or JSON "text" (a mapping, or empty) from
/// "path" into "vars"; later duplicate keys win, as in Ansible. "scope"
/// names the definer in messages.
Status ParseYamlVariables(const std::string& text, const std::string& path,
                          const std::string& scope, Variables* vars,
                          std::vector<std::string>* warnings, std::vector<std::string>* notes);

/// Checks the group graph for cycles (kInvalidInput naming the cycle and the
/// edge that closes it), then resolves every host into "inventory": groups in
/// Ansible's order (by depth, then name), the host's own variables on top.
/// Appends a warning where a setting from one group overrides another's and
/// neither group is inside the other. "raw" is modified (depths, ancestors).
Status ResolveInventory(RawInventory* raw, Inventory* inventory,
                        std::vector<std::string>* warnings);

/// Checks a variable fleetreap reads against its type; others pass. "scope"
/// names the definer for the message, e.g. `host "gpu03"` or `group "rack1"`.
/// Returns kInvalidInput "WHERE: SCOPE: NAME must be ..., got ..." on error.
Status CheckVariable(const std::string& scope, const std::string& name, const Variable& value);

/// For an Ansible variable that changes how Ansible connects but that
/// fleetreap does not honour (ansible_ssh_common_args, passwords, another
/// become method...), a note saying so; "" for every other variable.
std::string UnusedVariableNote(const std::string& name, const Variable& value);

/// True for the variables whose conflicting definitions deserve a warning:
/// connection variables (either spelling) and fleetreap_* settings.
bool IsSettingVariable(const std::string& name);

/// Fills "host"'s connection and fleetreap fields and its vars from the
/// resolved variables (already checked), choosing among spellings as
/// ansible-core does (ansible_ssh_host over ansible_host, and so on; a null
/// value counts as unset). Relative key-file and playbook paths are joined
/// to "base_dir"; "~/" is expanded with $HOME. A used value that is a Jinja
/// template sets host->problem instead.
void ApplyVariables(const std::map<std::string, const Variable*>& vars, const std::string& base_dir,
                    Host* host);

/// For an ansible_* name that Ansible does not know but that is one or two
/// edits from one it does (ansible_hots), "did you mean ansible_host?";
/// "" otherwise.
std::string AnsibleNameTypo(const std::string& name);

/// For a plain variable that older fleetreap read as a connection setting
/// (host, port, user, identity_file, become), the note that it is ignored;
/// "" otherwise.
std::string IgnoredPlainVariableNote(const std::string& name);

/// Validates a host name as the loaders accept it: letters, digits, ".",
/// "_", "-" and ":" (IPv6 literals). Returns an empty string when valid, else
/// the problem.
std::string CheckHostName(const std::string& name);

/// Python's int() of an ansible_group_priority value ("10", "-1", "2.0").
bool ParseGroupPriority(const std::string& text, int64_t* value);

/// "inventory/lab.yaml" -> "inventory"; "lab.yaml" -> "".
std::string DirectoryOf(const std::string& path);

/// What "text" is as YAML: a mapping (an Ansible inventory), something else
/// (a scalar or list: Ansible then reads the file as INI), or not YAML at all.
enum class YamlShape { kMapping, kOther, kSyntaxError };
YamlShape ProbeYaml(const std::string& text);

/// Whether the inventory script "path" may run: its file (symlinks
/// resolved) must belong to the caller or root and be writable by no one
/// else, its folder must belong to them too and not be world-writable
/// without the sticky bit. kInvalidInput naming the path and the reason.
[[nodiscard]] Status CheckScriptTrusted(const std::string& path);

}  // namespace inventory_internal
}  // namespace fleetreap
