// The Inventory model, LoadInventory (reads the file, picks the loader) and
// the plain host-list loader.
#include "fleetreap/inventory.h"

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

#include "fleetreap/host_pattern.h"
#include "inventory_internal.h"

namespace fleetreap {

using inventory_internal::Variable;
using inventory_internal::Variables;

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

namespace {

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// A file that fails to parse as YAML is still reported as YAML when it looks
// like a mapping was meant: some line ends in ":" or has ": " in it.
bool LooksLikeYaml(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
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

Status LineError(const std::string& path, size_t line, size_t column,
                 const std::string& problem) {
  return Status::Error(ErrorKind::kInvalidInput, path + ":" + std::to_string(line) +
                                                     ":" + std::to_string(column) +
                                                     ": " + problem);
}

// One host list entry: [user@]pattern[:port].
struct Entry {
  std::string user, pattern, port;
  size_t pattern_column = 0, port_column = 0;
};

}  // namespace

Status ParseHostList(const std::string& text, const std::string& path,
                     Inventory* inventory, std::vector<std::string>* warnings) {
  inventory->set_path(path);
  std::vector<std::string> order;
  std::unordered_map<std::string, std::pair<Variables, std::string>> hosts;
  std::istringstream in(text);
  std::string line;
  for (size_t number = 1; std::getline(in, line); ++number) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    size_t begin = line.find_first_not_of(" \t\r");
    if (begin == std::string::npos) continue;
    size_t end = line.find_first_of(" \t\r", begin);
    std::string token = line.substr(begin, end - begin);
    size_t extra = end == std::string::npos ? end : line.find_first_not_of(" \t\r", end);
    if (extra != std::string::npos) {
      return LineError(path, number, extra + 1,
                       "unexpected \"" + line.substr(extra) + "\" after \"" + token +
                           "\" (one host per line)");
    }
    Entry e;
    e.pattern_column = begin + 1;
    size_t at = token.find('@');
    if (at != std::string::npos) {
      e.user = token.substr(0, at);
      e.pattern_column += at + 1;
    }
    std::string rest = at == std::string::npos ? token : token.substr(at + 1);
    size_t colon = 0;
    if (inventory_internal::SplitHostPort(rest, &e.pattern, &e.port, &colon)) {
      e.port_column = e.pattern_column + colon + 1;
    }
    std::vector<std::string> names;
    Status s = ExpandHostPattern(e.pattern, &names);
    if (!s.ok()) return LineError(path, number, e.pattern_column, s.message());
    Variables vars;
    const std::string here = path + ":" + std::to_string(number) + ":";
    if (!e.user.empty()) {
      vars["ansible_user"] = {Variable::Kind::kScalar, e.user, {},
                              here + std::to_string(begin + 1)};
    }
    if (!e.port.empty() || e.port_column != 0) {
      vars["ansible_port"] = {Variable::Kind::kScalar, e.port, {},
                              here + std::to_string(e.port_column)};
    }
    for (const std::string& name : names) {
      std::string problem = inventory_internal::CheckHostName(name);
      if (!problem.empty()) return LineError(path, number, e.pattern_column, problem);
      for (const auto& [key, value] : vars) {
        s = inventory_internal::CheckVariable("host \"" + name + "\"", key, value);
        if (!s.ok()) return s;
      }
      auto [it, inserted] = hosts.try_emplace(name);
      if (inserted) {
        order.push_back(name);
        it->second.second = path + ":" + std::to_string(number);
      }
      for (const auto& [key, value] : vars) {
        auto old = it->second.first.find(key);
        if (old != it->second.first.end() && old->second.text != value.text) {
          warnings->push_back(value.where + ": host \"" + name + "\": " + key + " " +
                              value.text + " overrides " + old->second.text +
                              " set at " + old->second.where);
        }
        it->second.first[key] = value;
      }
    }
  }
  if (order.empty()) {
    return Status::Error(ErrorKind::kInvalidInput, path + ": no hosts in the inventory");
  }
  inventory->AddGroup("all");
  inventory->AddGroup("ungrouped");
  const std::string base_dir = inventory_internal::DirectoryOf(path);
  for (const std::string& name : order) {
    Host host;
    host.name = name;
    const auto& [vars, source] = hosts[name];
    host.source = source;
    host.groups = {"ungrouped"};
    std::map<std::string, const Variable*> resolved;
    for (const auto& [key, value] : vars) resolved[key] = &value;
    inventory_internal::ApplyVariables(resolved, base_dir, &host);
    size_t index = inventory->AddHost(std::move(host));
    inventory->AddToGroup("all", index);
    inventory->AddToGroup("ungrouped", index);
  }
  return Status::Ok();
}

Status LoadInventory(const std::string& path, Inventory* inventory,
                     std::vector<std::string>* warnings) {
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
  using inventory_internal::YamlShape;
  bool yaml = EndsWith(path, ".yaml") || EndsWith(path, ".yml");
  if (!yaml) {
    YamlShape shape = inventory_internal::ProbeYaml(text);
    yaml = shape == YamlShape::kMapping ||
           (shape == YamlShape::kSyntaxError && LooksLikeYaml(text));
  }
  if (yaml) return ParseYamlInventory(text, path, inventory, warnings);
  return ParseHostList(text, path, inventory, warnings);
}

}  // namespace fleetreap
