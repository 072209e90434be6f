// Inventory: the hosts and groups of a fleet, after loading. The model knows
// nothing of file formats; the loaders below build it from an Ansible
// inventory, YAML or INI, read as ansible-core 2.14 reads it (groups, ranges
// in host names, host:port keys, group_vars/ and host_vars/ beside the file,
// Ansible's variable precedence). Inventory is a value; reading it is
// thread-safe, building it is not.
//
// Variables fleetreap uses, with Ansible's precedence (all < groups by
// depth, ansible_group_priority, name < group_vars/all < group_vars/GROUP in
// the same order < the host's own < host_vars/HOST):
//   ansible_host, ansible_port, ansible_user, ansible_ssh_private_key_file,
//   ansible_private_key_file, ansible_become, and the ansible_ssh_host,
//   ansible_ssh_port, ansible_ssh_user spellings, which win where both are
//   set, as in Ansible; fleetreap_expected_gpus, fleetreap_playbook,
//   fleetreap_protect (a list), fleetreap_threshold_mib. Any other
//   fleetreap_* name is an error. Relative key-file and playbook paths are
//   relative to the inventory's directory; "~/" is the user's home. Plain
//   host, port, user, identity_file and become are ignored (a note says so).
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/inventory/inventory_program.h"

namespace fleetreap {

class Inventory {
 public:
  /// The file it was loaded from, as given to the loader.
  const std::string& path() const { return path_; }
  void set_path(std::string path) { path_ = std::move(path); }

  /// Every host, resolved, each once, in order of first appearance.
  const std::vector<Host>& hosts() const { return hosts_; }

  /// The index of host "name" in hosts(), or -1 when there is none.
  int HostIndex(const std::string& name) const;

  /// Every group name in order of first appearance, "all" first.
  const std::vector<std::string>& group_names() const { return group_names_; }

  /// Indices into hosts() (ascending) of the hosts in group "name" or in any
  /// group below it; nullptr when there is no such group. "all" has every
  /// host; "ungrouped" has the hosts that are in no other group.
  const std::vector<size_t>* GroupMembers(const std::string& name) const;

  /// Builders, for the loaders and for tests. AddHost appends "host" and
  /// returns its index; its name must not be in the inventory yet.
  /// AddToGroup adds host index "host" to "group", creating the group; a
  /// host index must be added in ascending order per group.
  size_t AddHost(Host host);
  void AddGroup(const std::string& group);
  void AddToGroup(const std::string& group, size_t host);

  /// A group as Ansible links it: its child groups and the hosts put in it
  /// directly, each in the order Ansible added them. Host patterns need it
  /// for Ansible's host order within a group (subscripts such as gpus[0]).
  struct GroupLinks {
    std::vector<std::string> children;
    std::vector<size_t> hosts;
  };
  void SetGroupLinks(const std::string& group, GroupLinks links);
  /// nullptr for a group without links recorded.
  const GroupLinks* Links(const std::string& group) const;

  /// Indices into hosts() of group "group"'s hosts in Ansible's own order
  /// (Group.get_hosts(): its own hosts, then those of the groups below it,
  /// breadth first). Below the first level Ansible walks a Python set, so
  /// its order can change from run to run: "*unordered" says when that
  /// could change the host order.
  std::vector<size_t> AnsibleGroupHosts(const std::string& group, bool* unordered) const;

 private:
  std::string path_;
  std::vector<Host> hosts_;
  std::unordered_map<std::string, size_t> host_index_;
  std::vector<std::string> group_names_;
  std::unordered_map<std::string, std::vector<size_t>> groups_;
  std::unordered_map<std::string, GroupLinks> links_;
};

/// Loads the inventory at "path" as Ansible would: YAML for *.yaml, *.yml,
/// *.json, and for a file without extension that is a YAML mapping; INI
/// otherwise. Then reads group_vars/ and host_vars/ beside it. Warnings that
/// do not stop the load (a host whose connection variables are set
/// differently in two places) are appended to "warnings", each as
/// "FILE:LINE[:COL]: text"; "notes" (may be null) gets what -v shows, such as
/// variables fleetreap ignores.
/// Errors are kInvalidInput and read "FILE:LINE[:COL]: problem", for example
///   inventory/lab.yaml:14:25: host "gpu03": ansible_port must be 1-65535, got 70000
/// or "FILE: problem" when no line applies (an unreadable file). On error
/// "inventory" is left in an unspecified state. A host whose used variable
/// is a Jinja template loads with Host::problem set (see SelectHosts).
Status LoadInventory(const std::string& path, Inventory* inventory,
                     std::vector<std::string>* warnings, std::vector<std::string>* notes = nullptr);

/// Loads every inventory source in "sources" (each -i, in order) into one
/// inventory, as ansible-core's InventoryManager does: each source adds its
/// groups, hosts and variables to those of the sources before it (a later
/// value wins), then group_vars/ and host_vars/ are read beside each source
/// in order (in it, for a directory), then everything is resolved. A source
/// is, as Ansible decides:
///  - a comma-separated host list ("gpu01,gpu02:2222,") when it has a comma
///    and names no file: the hosts, in "ungrouped";
///  - a directory: its entries sorted by name, each read as a source (a
///    directory recursively), skipping hidden names, group_vars, host_vars,
///    vars_plugins and Ansible's ignored extensions (INVENTORY_IGNORE_EXTS:
///    .pyc .pyo .swp .bak ~ .rpm .md .txt .rst .orig .ini .cfg .retry);
///  - an executable with "#!" (or an ELF binary): an inventory script, run
///    through "program" with --list (and --host NAME per host where its
///    output has no _meta.hostvars); if that fails and the file reads as
///    YAML or INI it is taken as such, as Ansible does;
///  - a *.yml / *.yaml file whose mapping has a "plugin" key: an inventory
///    plugin's configuration, read through `ansible-inventory -i FILE
///    --list` (Ansible itself then evaluates the plugin and Jinja), and
///    refused with an install hint when ansible-inventory is not on PATH;
///  - the JSON (or YAML) `ansible-inventory --list` prints (a "_meta"
///    group with "hostvars"): read as a script's output;
///  - else YAML or INI as LoadInventory reads one file.
/// "program" may be null: scripts and plugin files are then refused.
/// Same error contract as LoadInventory; inventory->path() is the sources
/// joined with ", ".
Status LoadInventorySources(const std::vector<std::string>& sources, InventoryProgram* program,
                            Inventory* inventory, std::vector<std::string>* warnings,
                            std::vector<std::string>* notes = nullptr);

/// Parses YAML inventory "text" as if read from "path" (which names the file
/// in messages, anchors relative paths and group_vars/). Same contract as
/// LoadInventory.
Status ParseYamlInventory(const std::string& text, const std::string& path, Inventory* inventory,
                          std::vector<std::string>* warnings,
                          std::vector<std::string>* notes = nullptr);

/// Parses INI inventory "text" as ansible-core's ini plugin does: [group],
/// [group:vars] and [group:children] sections, hosts before any section in
/// "ungrouped", "host[:port] key=value ..." lines split like a POSIX shell
/// with "#" comments, values typed by Python's literal rules (see
/// python_literal.h). Same contract as LoadInventory; errors read
/// "FILE:LINE: problem".
Status ParseIniInventory(const std::string& text, const std::string& path, Inventory* inventory,
                         std::vector<std::string>* warnings,
                         std::vector<std::string>* notes = nullptr);

}  // namespace fleetreap
