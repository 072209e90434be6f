// Inventory: the hosts and groups of a fleet, after loading. The model knows
// nothing of YAML; the loaders below build it from an Ansible-style YAML
// inventory (all/hosts/children/vars, ranges in host names, Ansible's
// variable precedence) or from a plain list of host names, one per line.
// Inventory is a value; reading it is thread-safe, building it is not.
//
// Variables the loaders understand (inherited through groups as Ansible
// does: all < parent group < child group < host; groups of equal depth by
// name):
//   ansible_host, ansible_port, ansible_user, ansible_ssh_private_key_file
//   (also ansible_private_key_file), ansible_become; the plain spellings host,
//   port, user, identity_file and become are used when the ansible_ one is
//   absent; fleetreap_expected_gpus, fleetreap_playbook, fleetreap_protect
//   (a list), fleetreap_threshold_mib. Any other fleetreap_* name is an error.
//   Relative key-file and playbook paths are relative to the inventory's
//   directory; "~/" is the user's home.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "fleetreap/host.h"
#include "fleetreap/status.h"

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

 private:
  std::string path_;
  std::vector<Host> hosts_;
  std::unordered_map<std::string, size_t> host_index_;
  std::vector<std::string> group_names_;
  std::unordered_map<std::string, std::vector<size_t>> groups_;
};

/// Loads the inventory at "path": YAML in Ansible's format when the file is a
/// YAML mapping, otherwise a plain host list (see ParseHostList). A file named
/// *.yml or *.yaml is always read as YAML. Warnings that do not stop the load
/// (a host whose connection variables are set differently in two places) are
/// appended to "warnings", each as "FILE:LINE:COL: text".
/// Errors are kInvalidInput and read "FILE:LINE:COL: problem", for example
///   inventory/lab.yaml:14:25: host "gpu03": ansible_port must be 1-65535, got 70000
/// or "FILE: problem" when no line applies (an unreadable file). On error
/// "inventory" is left in an unspecified state.
Status LoadInventory(const std::string& path, Inventory* inventory,
                     std::vector<std::string>* warnings);

/// Parses YAML inventory "text" as if read from "path" (which names the file
/// in messages and anchors relative paths). Same contract as LoadInventory.
Status ParseYamlInventory(const std::string& text, const std::string& path,
                          Inventory* inventory,
                          std::vector<std::string>* warnings);

/// Parses a plain host list: one host or range per line, each optionally
/// "user@" before and ":port" after it (`root@gpu[01:08]:2222`); blank lines
/// and "#" comments are skipped. Every host is in "all" and "ungrouped".
Status ParseHostList(const std::string& text, const std::string& path,
                     Inventory* inventory, std::vector<std::string>* warnings);

}  // namespace fleetreap
