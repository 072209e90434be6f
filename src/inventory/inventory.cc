// The Inventory model and LoadInventory (reads the file, picks the loader as
// Ansible does, then reads group_vars/ and host_vars/ through the loader).
#include "fleetreap/inventory/inventory.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <system_error>
#include <unordered_map>
#include <utility>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/host_pattern.h"
#include "inventory_internal.h"

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

namespace {

// A file that fails to parse as YAML is still reported as YAML when it looks
// like a mapping was meant: some line ends in ":" or has ": " in it.
bool LooksLikeYaml(const std::string& text) {
  for (std::string line : SplitLines(text)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.pop_back();
    }
    if (!line.empty() && (line.back() == ':' || line.find(": ") != std::string::npos)) {
      return true;
    }
  }
  return false;
}

}  // namespace

Status LoadInventory(const std::string& path, Inventory* inventory,
                     std::vector<std::string>* warnings, std::vector<std::string>* notes) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return Status::Error(ErrorKind::kInvalidInput,
                         path + ": cannot read: " + std::strerror(EISDIR));
  }
  std::ifstream file(path, std::ios::binary);
  std::string text;
  if (file) {
    std::ostringstream buffer;
    buffer << file.rdbuf();
    text = buffer.str();
  }
  if (!file || file.bad()) {
    int error = errno;
    return Status::Error(ErrorKind::kInvalidInput,
                         path + ": cannot read: " + std::strerror(error ? error : EIO));
  }
  // Ansible tries its yaml plugin on *.yaml, *.yml, *.json and files with no
  // extension, then the ini plugin on anything.
  using inventory_internal::YamlShape;
  const std::string name = path.substr(path.rfind('/') + 1);
  const size_t dot = name.rfind('.');
  const std::string ext = dot == std::string::npos || dot == 0 ? "" : name.substr(dot);
  const bool yaml_ext = ext == ".yaml" || ext == ".yml" || ext == ".json";
  if (yaml_ext) return ParseYamlInventory(text, path, inventory, warnings, notes);
  YamlShape shape = ext.empty() ? inventory_internal::ProbeYaml(text) : YamlShape::kOther;
  if (shape == YamlShape::kMapping) {
    return ParseYamlInventory(text, path, inventory, warnings, notes);
  }
  Status ini = ParseIniInventory(text, path, inventory, warnings, notes);
  if (!ini.ok() && shape == YamlShape::kSyntaxError && LooksLikeYaml(text)) {
    return ParseYamlInventory(text, path, inventory, warnings, notes);
  }
  return ini;
}

}  // namespace fleetreap
