// The YAML inventory loader: the only code that knows yaml-cpp. It walks the
// document into raw groups and hosts, checks the group graph for cycles, then
// resolves each host's variables in Ansible's order. yaml-cpp exceptions are
// caught here and become Status values.
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "fleetreap/host_pattern.h"
#include "fleetreap/inventory.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {

YamlShape ProbeYaml(const std::string& text) {
  try {
    return YAML::Load(text).IsMap() ? YamlShape::kMapping : YamlShape::kOther;
  } catch (const YAML::Exception&) {
    return YamlShape::kSyntaxError;
  }
}

}  // namespace inventory_internal

namespace {

using inventory_internal::Variable;
using inventory_internal::Variables;

constexpr int kMaxNesting = 64;

const char* KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "a string";
    default: return "nothing";
  }
}

struct RawGroup {
  Variables vars;
  std::vector<std::pair<std::string, std::string>> children;  // name, where
  std::vector<std::string> parents;
  std::string where;
  int depth = -1;
  std::vector<int> ancestors;  // group ids, itself included, by (depth, name)
};

struct RawHost {
  Variables vars;
  std::vector<int> groups;  // direct groups, by id
  std::string source;       // "FILE:LINE"
};

class YamlLoader {
 public:
  YamlLoader(const std::string& path, std::vector<std::string>* warnings)
      : path_(path), warnings_(warnings) {}

  Status Load(const YAML::Node& root);
  Status Build(Inventory* inventory);

 private:
  std::string Where(const YAML::Node& node) const {
    YAML::Mark m = node.Mark();
    if (m.is_null()) return path_;
    return path_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }
  Status Error(const YAML::Node& at, const std::string& problem) const {
    return Status::Error(ErrorKind::kInvalidInput, Where(at) + ": " + problem);
  }
  int GroupId(const std::string& name, const std::string& where);
  Status LoadGroup(int id, const YAML::Node& body, int nesting);
  Status LoadHosts(int group, const YAML::Node& hosts);
  Status LoadVars(const std::string& scope, const YAML::Node& node, Variables* vars);
  Status CheckCycles();
  void ComputeDepth(int id);
  void Merge(const Variables& from, int group, const std::string& host,
             std::map<std::string, const Variable*>* into,
             std::map<std::string, int>* setter);

  std::string path_;
  std::vector<std::string>* warnings_;
  std::vector<std::string> group_names_;
  std::vector<RawGroup> groups_;
  std::unordered_map<std::string, int> group_ids_;
  std::vector<std::string> host_names_;
  std::vector<RawHost> hosts_;
  std::unordered_map<std::string, size_t> host_ids_;
  std::set<std::tuple<std::string, int, int>> warned_;
};

int YamlLoader::GroupId(const std::string& name, const std::string& where) {
  auto [it, inserted] = group_ids_.try_emplace(name, static_cast<int>(groups_.size()));
  if (inserted) {
    group_names_.push_back(name);
    groups_.emplace_back();
    groups_.back().where = where;
    if (name.find_first_of(",:!&*?[]~@ \t") != std::string::npos) {
      warnings_->push_back(where + ": group \"" + name +
                           "\" has characters that --limit cannot select");
    }
  }
  return it->second;
}

Status YamlLoader::Load(const YAML::Node& root) {
  const int all = GroupId("all", path_);
  for (const auto& kv : root) {
    const YAML::Node& key = kv.first;
    const YAML::Node& value = kv.second;
    if (!key.IsScalar()) return Error(key, "expected a group name, got " + std::string(KindName(key)));
    const std::string& name = key.Scalar();
    if (name == "hosts" || name == "vars" || name == "children") {
      return Error(key, "unknown top-level key \"" + name +
                            "\" (an inventory starts with \"all:\" or a group name)");
    }
    if (!value.IsNull() && !value.IsMap()) {
      return Error(key, "unknown top-level key \"" + name +
                            "\": expected a group (a mapping with hosts, children or "
                            "vars), got " + KindName(value));
    }
    int id = GroupId(name, Where(key));
    if (id != all) groups_[all].children.emplace_back(name, Where(key));
    Status s = LoadGroup(id, value, 0);
    if (!s.ok()) return s;
  }
  return CheckCycles();
}

Status YamlLoader::LoadGroup(int id, const YAML::Node& body, int nesting) {
  if (body.IsNull()) return Status::Ok();
  const std::string scope = "group \"" + group_names_[id] + "\"";
  if (nesting > kMaxNesting) {
    return Error(body, scope + ": groups nested more than " +
                           std::to_string(kMaxNesting) + " deep");
  }
  if (!body.IsMap()) {
    return Error(body, scope + " must be a mapping with hosts, children or vars, got " +
                           KindName(body));
  }
  for (const auto& kv : body) {
    const YAML::Node& key = kv.first;
    const YAML::Node& value = kv.second;
    const std::string name = key.IsScalar() ? key.Scalar() : "";
    Status s;
    if (name == "hosts") {
      s = LoadHosts(id, value);
    } else if (name == "vars") {
      s = LoadVars(scope, value, &groups_[id].vars);
    } else if (name == "children") {
      if (!value.IsNull() && !value.IsMap()) {
        return Error(value, scope + ": children must be a mapping of group names, got " +
                                KindName(value));
      }
      for (const auto& child : value) {
        if (!child.first.IsScalar() || child.first.Scalar().empty()) {
          return Error(child.first, scope + ": expected a group name");
        }
        int c = GroupId(child.first.Scalar(), Where(child.first));
        auto& edges = groups_[id].children;
        if (std::none_of(edges.begin(), edges.end(),
                         [&](const auto& e) { return e.first == child.first.Scalar(); })) {
          edges.emplace_back(child.first.Scalar(), Where(child.first));
        }
        s = LoadGroup(c, child.second, nesting + 1);
        if (!s.ok()) return s;
      }
    } else {
      return Error(key, scope + ": unknown key \"" + name +
                            "\" (expected hosts, children or vars)");
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status YamlLoader::LoadVars(const std::string& scope, const YAML::Node& node,
                            Variables* vars) {
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) {
    return Error(node, scope + ": vars must be a mapping, got " + KindName(node));
  }
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return Error(kv.first, scope + ": expected a variable name");
    const YAML::Node& v = kv.second;
    Variable var;
    var.where = Where(v.Mark().is_null() ? kv.first : v);
    if (v.IsScalar()) {
      var.kind = Variable::Kind::kScalar;
      var.text = v.Scalar();
    } else if (v.IsSequence() || v.IsMap()) {
      var.kind = v.IsMap() ? Variable::Kind::kMap : Variable::Kind::kList;
      YAML::Emitter out;
      out << YAML::Flow << v;
      var.text = out.c_str();
      if (v.IsSequence()) {
        for (const auto& item : v) {
          if (item.IsScalar()) {
            var.items.push_back(item.Scalar());
          } else {
            YAML::Emitter flow;
            flow << YAML::Flow << item;
            var.items.push_back(flow.c_str());
          }
        }
      }
    }
    Status s = inventory_internal::CheckVariable(scope, kv.first.Scalar(), var);
    if (!s.ok()) return s;
    (*vars)[kv.first.Scalar()] = std::move(var);
  }
  return Status::Ok();
}

Status YamlLoader::LoadHosts(int group, const YAML::Node& node) {
  const std::string& group_name = group_names_[group];
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) {
    return Error(node, "group \"" + group_name +
                           "\": hosts must be a mapping of host names, got " +
                           KindName(node));
  }
  for (const auto& kv : node) {
    const YAML::Node& key = kv.first;
    const YAML::Node& value = kv.second;
    if (!key.IsScalar()) return Error(key, "group \"" + group_name + "\": expected a host name");
    const std::string scope = "host \"" + key.Scalar() + "\"";
    std::string pattern, port;
    size_t colon = 0;
    bool has_port = inventory_internal::SplitHostPort(key.Scalar(), &pattern, &port, &colon);
    std::vector<std::string> names;
    Status s = ExpandHostPattern(pattern, &names);
    if (!s.ok()) return Error(key, s.message());
    if (!value.IsNull() && !value.IsMap()) {
      return Error(value, scope + ": expected variables (a mapping) or nothing, got " +
                              KindName(value));
    }
    Variables vars;
    s = LoadVars(scope, value, &vars);
    if (!s.ok()) return s;
    if (has_port) {
      YAML::Mark m = key.Mark();
      Variable var{Variable::Kind::kScalar, port, {},
                   path_ + ":" + std::to_string(m.line + 1) + ":" +
                       std::to_string(m.column + colon + 2)};
      s = inventory_internal::CheckVariable(scope, "ansible_port", var);
      if (!s.ok()) return s;
      vars["ansible_port"] = std::move(var);
    }
    const std::string source = path_ + ":" + std::to_string(key.Mark().line + 1);
    for (const std::string& name : names) {
      std::string problem = inventory_internal::CheckHostName(name);
      if (!problem.empty()) return Error(key, problem);
      auto [it, inserted] = host_ids_.try_emplace(name, hosts_.size());
      if (inserted) {
        host_names_.push_back(name);
        hosts_.emplace_back();
        hosts_.back().source = source;
      }
      RawHost& host = hosts_[it->second];
      if (std::find(host.groups.begin(), host.groups.end(), group) == host.groups.end()) {
        host.groups.push_back(group);
      }
      for (const auto& [var, v] : vars) {
        auto old = host.vars.find(var);
        if (old != host.vars.end() && old->second.text != v.text &&
            inventory_internal::IsSettingVariable(var)) {
          warnings_->push_back(v.where + ": host \"" + name + "\": " + var + " \"" +
                               v.text + "\" overrides \"" + old->second.text +
                               "\" set at " + old->second.where);
        }
        host.vars[var] = v;
      }
    }
  }
  return Status::Ok();
}

Status YamlLoader::CheckCycles() {
  enum { kWhite, kGray, kBlack };
  std::vector<int> color(groups_.size(), kWhite);
  std::vector<int> stack;
  std::function<Status(int)> visit = [&](int id) -> Status {
    color[id] = kGray;
    stack.push_back(id);
    for (const auto& [child_name, where] : groups_[id].children) {
      int child = group_ids_.at(child_name);
      if (color[child] == kGray) {
        std::string cycle;
        auto from = std::find(stack.begin(), stack.end(), child);
        for (auto it = from; it != stack.end(); ++it) cycle += group_names_[*it] + " -> ";
        return Status::Error(ErrorKind::kInvalidInput,
                             where + ": group \"" + child_name +
                                 "\" contains itself: " + cycle + child_name);
      }
      if (color[child] == kWhite) {
        Status s = visit(child);
        if (!s.ok()) return s;
      }
    }
    stack.pop_back();
    color[id] = kBlack;
    return Status::Ok();
  };
  for (size_t id = 0; id < groups_.size(); ++id) {
    if (color[id] == kWhite) {
      Status s = visit(static_cast<int>(id));
      if (!s.ok()) return s;
    }
  }
  for (size_t id = 0; id < groups_.size(); ++id) {
    for (const auto& child : groups_[id].children) {
      groups_[group_ids_.at(child.first)].parents.push_back(group_names_[id]);
    }
  }
  return Status::Ok();
}

// Ansible's depth: the longest path from "all". Ancestors are sorted the way
// Ansible combines group variables: by depth, then by name.
void YamlLoader::ComputeDepth(int id) {
  RawGroup& g = groups_[id];
  if (g.depth >= 0) return;
  g.depth = 0;
  std::set<int> ancestors = {id};
  for (const std::string& parent : g.parents) {
    int p = group_ids_.at(parent);
    ComputeDepth(p);
    g.depth = std::max(g.depth, groups_[p].depth + 1);
    ancestors.insert(groups_[p].ancestors.begin(), groups_[p].ancestors.end());
  }
  g.ancestors.assign(ancestors.begin(), ancestors.end());
  std::sort(g.ancestors.begin(), g.ancestors.end(), [this](int a, int b) {
    return std::tie(groups_[a].depth, group_names_[a]) <
           std::tie(groups_[b].depth, group_names_[b]);
  });
}

// Applies one group's variables over those of groups applied before it. When
// it overrides a setting from a group that is not its ancestor, Ansible's
// choice (deeper group, then later name) may surprise: warn once per pair.
void YamlLoader::Merge(const Variables& from, int group, const std::string& host,
                       std::map<std::string, const Variable*>* into,
                       std::map<std::string, int>* setter) {
  const std::vector<int>& mine = groups_[group].ancestors;
  for (const auto& [name, value] : from) {
    auto old = into->find(name);
    if (old != into->end() && old->second->text != value.text &&
        inventory_internal::IsSettingVariable(name)) {
      int other = (*setter)[name];
      if (std::find(mine.begin(), mine.end(), other) == mine.end() &&
          warned_.emplace(name, other, group).second) {
        warnings_->push_back(value.where + ": group \"" + group_names_[group] +
                             "\" sets " + name + " \"" + value.text +
                             "\", overriding \"" + old->second->text + "\" from group \"" +
                             group_names_[other] + "\" at " + old->second->where +
                             " for hosts in both (first: \"" + host + "\")");
      }
    }
    (*into)[name] = &value;
    (*setter)[name] = group;
  }
}

Status YamlLoader::Build(Inventory* inventory) {
  if (hosts_.empty()) {
    return Status::Error(ErrorKind::kInvalidInput, path_ + ": no hosts in the inventory");
  }
  const int all = group_ids_.at("all");
  const int ungrouped = GroupId("ungrouped", path_);
  if (groups_[ungrouped].parents.empty()) groups_[ungrouped].parents.push_back("all");
  for (size_t id = 0; id < groups_.size(); ++id) ComputeDepth(static_cast<int>(id));
  for (const std::string& name : group_names_) inventory->AddGroup(name);
  const std::string base_dir = inventory_internal::DirectoryOf(path_);
  // Hosts with the same direct groups share everything but their own
  // variables: resolve each combination of groups once.
  struct Resolved {
    std::vector<int> groups;
    std::map<std::string, const Variable*> vars;
    Host host;
  };
  std::map<std::vector<int>, Resolved> by_groups;
  for (size_t h = 0; h < hosts_.size(); ++h) {
    RawHost& raw = hosts_[h];
    if (std::all_of(raw.groups.begin(), raw.groups.end(),
                    [&](int g) { return g == all || g == ungrouped; })) {
      raw.groups.push_back(ungrouped);
    }
    std::vector<int> key = raw.groups;
    std::sort(key.begin(), key.end());
    auto [it, inserted] = by_groups.try_emplace(std::move(key));
    Resolved& resolved = it->second;
    if (inserted) {
      for (int g : raw.groups) {
        resolved.groups.insert(resolved.groups.end(), groups_[g].ancestors.begin(),
                               groups_[g].ancestors.end());
      }
      std::sort(resolved.groups.begin(), resolved.groups.end(), [this](int a, int b) {
        return std::tie(groups_[a].depth, group_names_[a]) <
               std::tie(groups_[b].depth, group_names_[b]);
      });
      resolved.groups.erase(std::unique(resolved.groups.begin(), resolved.groups.end()),
                            resolved.groups.end());
      std::map<std::string, int> setter;
      for (int g : resolved.groups) {
        Merge(groups_[g].vars, g, host_names_[h], &resolved.vars, &setter);
        if (g != all) resolved.host.groups.push_back(group_names_[g]);
      }
      std::sort(resolved.host.groups.begin(), resolved.host.groups.end());
      inventory_internal::ApplyVariables(resolved.vars, base_dir, &resolved.host);
    }
    Host host;
    if (raw.vars.empty()) {
      host = resolved.host;
    } else {
      std::map<std::string, const Variable*> vars = resolved.vars;
      for (const auto& [name, value] : raw.vars) vars[name] = &value;
      host.groups = resolved.host.groups;
      inventory_internal::ApplyVariables(vars, base_dir, &host);
    }
    host.name = host_names_[h];
    if (host.address.empty()) host.address = host.name;
    host.source = raw.source;
    size_t index = inventory->AddHost(std::move(host));
    for (int g : resolved.groups) inventory->AddToGroup(group_names_[g], index);
  }
  return Status::Ok();
}

}  // namespace

Status ParseYamlInventory(const std::string& text, const std::string& path,
                          Inventory* inventory, std::vector<std::string>* warnings) {
  inventory->set_path(path);
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      return Status::Error(ErrorKind::kInvalidInput,
                           path + ":1:1: expected a mapping of groups (\"all:\"), got " +
                               KindName(root));
    }
    YamlLoader loader(path, warnings);
    Status s = loader.Load(root);
    if (!s.ok()) return s;
    return loader.Build(inventory);
  } catch (const YAML::Exception& e) {
    std::string where = path;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::Error(ErrorKind::kInvalidInput, where + ": YAML syntax error: " + e.msg);
  }
}

}  // namespace fleetreap
