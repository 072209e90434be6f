// ConfigFile: the defaults a run takes from outside its command line, as
// settings that each name a flag and where they came from. Four layers, the
// first that sets a key wins (the command line wins over all of them):
//   1. the environment: FLEETREAP_FORKS=16, FLEETREAP_KNOWN_HOSTS=..., one
//      variable per key below, upper case, "-" as "_";
//   2. the user file, $XDG_CONFIG_HOME/fleetreap/config.yaml (default
//      ~/.config/fleetreap/config.yaml);
//   3. the system file, /etc/fleetreap/config.yaml;
//   4. Ansible's: ANSIBLE_INVENTORY, ANSIBLE_REMOTE_USER,
//      ANSIBLE_PRIVATE_KEY_FILE, ANSIBLE_FORKS, ANSIBLE_HOST_KEY_CHECKING,
//      then the [defaults] of the one ansible.cfg Ansible reads
//      (ANSIBLE_CONFIG, ./ansible.cfg, ~/.ansible.cfg,
//      /etc/ansible/ansible.cfg: inventory, remote_user, private_key_file,
//      forks, host_key_checking).
// The parsers are pure; LoadDefaults reads the files. Thread-compatible.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

struct Setting {
  std::string key;                  // a flag's long name: "known-hosts"
  std::vector<std::string> values;  // one; several for "hosts" and "protect"
  // Where it came from: "FLEETREAP_FORKS", "/etc/fleetreap/config.yaml:3",
  // "/srv/ansible.cfg:4 (remote_user)".
  std::string source;
};

using Environment = std::map<std::string, std::string>;

/// Where LoadDefaults looks: the environment (HOME, XDG_CONFIG_HOME,
/// ANSIBLE_CONFIG and the variables above), the current directory for
/// ./ansible.cfg, and the system files (tests point them elsewhere).
struct ConfigPlaces {
  Environment env;
  std::string cwd;
  std::string system_file = "/etc/fleetreap/config.yaml";
  std::string system_ansible_cfg = "/etc/ansible/ansible.cfg";
};

/// The keys a config file or FLEETREAP_* variable may set, in --help order:
/// hosts, limit, forks, connect-timeout, ... Each is a flag's long name.
const std::vector<std::string>& ConfigKeys();

/// Whether "key" takes no value (become, no-agent, ssh-config): its value
/// is then true or false.
bool IsSwitchKey(const std::string& key);

/// A config.yaml: a mapping of keys (ConfigKeys, "_" or "-" between words)
/// to a scalar, or a list for hosts and protect; empty text is no settings.
/// kUsage "FILE:LINE:COL: problem" for an unknown key, e.g.
///   /etc/fleetreap/config.yaml:3:1: unknown setting "forcks" (did you mean forks?)
/// and for a value of the wrong shape. Relative paths in hosts, identity,
/// known-hosts, ssh-config-file, playbook and log-dir are relative to the
/// file's directory; "~/" is left for the flag's own reading.
Status ParseConfigYaml(const std::string& text, const std::string& path,
                       std::vector<Setting>* settings);

/// An ansible.cfg's [defaults], as Python's configparser reads it (";"
/// starts an inline comment, keys are case-insensitive): inventory (a comma
/// list of sources, relative to the file's directory) as hosts, remote_user
/// as user, private_key_file as identity, forks, host_key_checking (false:
/// accept-new, true: strict) as host-key-policy. Other keys are Ansible's
/// and ignored. kUsage "FILE:LINE: problem" for a line configparser rejects.
Status ParseAnsibleCfg(const std::string& text, const std::string& path,
                       std::vector<Setting>* settings);

/// Every layer in precedence order, highest first (so the first Setting of
/// a key is the one that counts). kUsage as the parsers return it, or
/// "FILE: cannot read: reason" for a file that exists but cannot be read.
/// "notes" (may be null) gets a line for an ansible.cfg Ansible would skip
/// (in a world-writable current directory).
Status LoadDefaults(const ConfigPlaces& places, std::vector<Setting>* settings,
                    std::vector<std::string>* notes);

}  // namespace fleetreap
