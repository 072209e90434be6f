// The Inventory model (the loaders are inventory_sources.cc and the files it
// calls).
#include "fleetreap/inventory/inventory.h"

#include <unordered_map>
#include <utility>

namespace fleetreap {

int Inventory::HostIndex(const std::string& name) const {
  auto it = host_index_.find(name);
  return it == host_index_.end() ? -1 : static_cast<int>(it->second);
}

const std::vector<size_t>* Inventory::GroupMembers(const std::string& name) const {
  auto it = groups_.find(name);
  return it == groups_.end() ? nullptr : &it->second;
}

size_t Inventory::AddHost(Host host) {
  size_t index = hosts_.size();
  host_index_.emplace(host.name, index);
  hosts_.push_back(std::move(host));
  return index;
}

void Inventory::AddGroup(const std::string& group) {
  if (groups_.try_emplace(group).second) group_names_.push_back(group);
}

void Inventory::AddToGroup(const std::string& group, size_t host) {
  AddGroup(group);
  groups_[group].push_back(host);
}

void Inventory::SetGroupLinks(const std::string& group, GroupLinks links) {
  AddGroup(group);
  links_[group] = std::move(links);
}

const Inventory::GroupLinks* Inventory::Links(const std::string& group) const {
  auto it = links_.find(group);
  return it == links_.end() ? nullptr : &it->second;
}

}  // namespace fleetreap
