// Describe(): an Inventory as one line per host with the fields that differ
// from a default Host, for the inventory loaders' table tests.
#pragma once

#include <string>

#include "fleetreap/inventory/inventory.h"

namespace fleetreap {

// One line per host with the fields that differ from a default Host.
inline std::string Describe(const Inventory& inventory) {
  std::string out;
  for (const Host& h : inventory.hosts()) {
    out += h.name + " " + h.address + ":" + std::to_string(h.port);
    if (!h.user.empty()) out += " user=" + h.user;
    if (!h.identity_file.empty()) out += " key=" + h.identity_file;
    if (h.become) out += " become";
    if (h.expected_gpus) out += " gpus=" + std::to_string(h.expected_gpus);
    if (!h.playbook.empty()) out += " playbook=" + h.playbook;
    if (!h.protect.empty()) {
      out += " protect=";
      for (size_t i = 0; i < h.protect.size(); ++i) out += (i ? "," : "") + h.protect[i];
    }
    if (h.threshold_mib) out += " mib=" + std::to_string(*h.threshold_mib);
    out += " [";
    for (size_t i = 0; i < h.groups.size(); ++i) out += (i ? " " : "") + h.groups[i];
    out += "] " + h.source + "\n";
  }
  return out;
}

}  // namespace fleetreap
