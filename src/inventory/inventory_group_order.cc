// Inventory::AnsibleGroupHosts: a group's hosts in the order ansible-core's
// Group.get_hosts() gives them (inventory/group.py, _walk_relationship with
// preserve_ordering), which subscripts such as gpus[0] index.
#include <set>
#include <string>
#include <vector>

#include "fleetreap/inventory/inventory.h"

namespace fleetreap {

std::vector<size_t> Inventory::AnsibleGroupHosts(const std::string& group, bool* unordered) const {
  const std::vector<size_t> none;
  auto hosts_of = [&](const std::string& g) -> const std::vector<size_t>& {
    const Inventory::GroupLinks* l = Links(g);
    return l ? l->hosts : none;
  };
  std::vector<std::string> ordered = {group};
  std::vector<std::string> round = {group};
  if (const Inventory::GroupLinks* top = Links(group)) {
    ordered.insert(ordered.end(), top->children.begin(), top->children.end());
    round.insert(round.end(), top->children.begin(), top->children.end());
  }
  std::set<std::string> seen;
  std::vector<char> before(hosts_.size(), 0);  // hosts of groups so far
  for (const std::string& g : ordered) {
    for (size_t h : hosts_of(g)) before[h] = 1;
  }
  *unordered = false;
  while (!round.empty()) {
    seen.insert(round.begin(), round.end());
    std::set<std::string> next;
    std::vector<size_t> brought;
    int contributors = 0;
    for (const std::string& item : round) {
      const Inventory::GroupLinks* l = Links(item);
      if (!l) continue;
      bool brings_hosts = false;
      for (const std::string& c : l->children) {
        if (seen.count(c)) continue;
        ordered.push_back(c);
        next.insert(c);
        for (size_t h : hosts_of(c)) {
          if (!before[h]) {
            brings_hosts = true;
            brought.push_back(h);
          }
        }
      }
      contributors += brings_hosts;
    }
    if (contributors > 1) *unordered = true;
    for (size_t h : brought) before[h] = 1;
    round.assign(next.begin(), next.end());
  }
  std::vector<size_t> hosts;
  std::vector<char> listed(hosts_.size(), 0);
  for (const std::string& g : ordered) {
    for (size_t h : hosts_of(g)) {
      if (!listed[h]) {
        listed[h] = 1;
        hosts.push_back(h);
      }
    }
  }
  return hosts;
}

}  // namespace fleetreap
