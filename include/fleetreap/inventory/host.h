// Host: one GPU host as the rest of fleetreap sees it, after the inventory has
// resolved groups, ranges and inherited variables. Plain value type.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fleetreap {

struct Host {
  std::string name;           // inventory name, e.g. "gpu07"
  std::string address;        // ansible_host, or the name
  int port = 22;              // ansible_port
  std::string user;           // ansible_user; "" means the local user
  std::string identity_file;  // ansible_ssh_private_key_file
  bool become = false;        // ansible_become: run under sudo -n

  // fleetreap's own settings (fleetreap_ prefix in the inventory).
  int expected_gpus = 0;                 // 0: take what nvidia-smi reports
  std::string playbook;                  // fleetreap_playbook path, "" = default
  std::vector<std::string> protect;      // fleetreap_protect: extra names/paths
  std::optional<int64_t> threshold_mib;  // fleetreap_threshold_mib

  std::vector<std::string> groups;          // every group it belongs to
  std::map<std::string, std::string> vars;  // all resolved scalar variables
  std::string source;                       // "inventory/lab.yaml:14"
  // Why this host cannot be acted on as the inventory stands (a connection
  // setting that is a Jinja template), "FILE:LINE[:COL]: ..."; "" when usable.
  std::string problem;
};

}  // namespace fleetreap
