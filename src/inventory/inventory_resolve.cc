// Resolution of a RawInventory into an Inventory: checks the group graph for
// cycles, computes Ansible's group depths, and gives every host the variables
// of its groups in Ansible's order (by depth, then name), its own on top.
#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "fleetreap/inventory/inventory.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {

int RawInventory::GroupId(const std::string& name, const std::string& where,
                          std::vector<std::string>* warnings) {
  if (groups.empty()) {  // Ansible's InventoryData starts with these two
    group_names = {"all", "ungrouped"};
    groups.resize(2);
    groups[0].where = groups[1].where = where;
    groups[0].children.emplace_back("ungrouped", where);
    group_ids = {{"all", 0}, {"ungrouped", 1}};
  }
  auto [it, inserted] = group_ids.try_emplace(name, static_cast<int>(groups.size()));
  if (inserted) {
    group_names.push_back(name);
    groups.emplace_back();
    groups.back().where = where;
    if (name.find_first_of(",:!&*?[]~@ \t") != std::string::npos) {
      warnings->push_back(where + ": group \"" + name +
                          "\" has characters that --limit cannot select");
    }
  }
  return it->second;
}

size_t RawInventory::AddHost(const std::string& name, const std::string& source, int group,
                             int port, const std::string& port_where) {
  auto [it, inserted] = host_ids.try_emplace(name, hosts.size());
  if (inserted) {
    host_names.push_back(name);
    hosts.emplace_back();
    hosts.back().source = source;
    hosts.back().base_dir = base_dir;
    if (port >= 0) {
      hosts.back().vars["ansible_port"] = {
          Variable::Kind::kScalar, std::to_string(port), {}, port_where};
    }
  }
  RawHost& host = hosts[it->second];
  if (group >= 0 && std::find(host.groups.begin(), host.groups.end(), group) == host.groups.end()) {
    host.groups.push_back(group);
    groups[group].hosts.push_back(it->second);
  }
  return it->second;
}

void RawInventory::AddChild(int parent, int child, const std::string& where) {
  auto& edges = groups[parent].children;
  const std::string& name = group_names[child];
  if (std::none_of(edges.begin(), edges.end(), [&](const auto& e) { return e.first == name; })) {
    edges.emplace_back(name, where);
  }
}

namespace {

class Resolver {
 public:
  Resolver(RawInventory* raw, std::vector<std::string>* warnings)
      : raw_(*raw), warnings_(warnings) {}

  void AttachToAll();
  Status CheckCycles();
  Status Build(Inventory* inventory);

 private:
  void ComputeDepth(int id);
  bool Before(int a, int b) const {
    return std::tie(raw_.groups[a].depth, raw_.groups[a].priority, raw_.group_names[a]) <
           std::tie(raw_.groups[b].depth, raw_.groups[b].priority, raw_.group_names[b]);
  }
  void ReconcileUngrouped();
  std::string VaultHint(const std::vector<int>& groups, const std::string& host) const;
  void Merge(const Variables& from, int group, const std::string& host,
             std::map<std::string, const Variable*>* into, std::map<std::string, int>* setter);

  RawInventory& raw_;
  std::vector<std::string>* warnings_;
  std::set<std::tuple<std::string, int, int>> warned_;  // (variable, group, group)
};

// Ansible's reconcile_inventory: a group with no parent goes below "all", in
// the order groups were created.
void Resolver::AttachToAll() {
  std::vector<bool> has_parent(raw_.groups.size(), false);
  for (const RawGroup& g : raw_.groups) {
    for (const auto& child : g.children) has_parent[raw_.group_ids.at(child.first)] = true;
  }
  for (size_t id = 1; id < raw_.groups.size(); ++id) {
    if (!has_parent[id]) raw_.AddChild(0, static_cast<int>(id), raw_.groups[id].where);
  }
}

// Ansible's reconcile_inventory again: a host in no group but "all" (or
// none) is added to "ungrouped"; one in "ungrouped" and another group leaves
// "ungrouped". Hosts go in inventory order.
void Resolver::ReconcileUngrouped() {
  const int ungrouped = raw_.group_ids.at("ungrouped");
  for (size_t h = 0; h < raw_.hosts.size(); ++h) {
    RawHost& host = raw_.hosts[h];
    bool in_ungrouped = false, in_other = false;
    for (int g : host.groups) {
      for (int a : raw_.groups[g].ancestors) {
        if (a == ungrouped) in_ungrouped = true;
        if (a != ungrouped && a != 0) in_other = true;
      }
    }
    if (in_ungrouped && in_other) {
      host.groups.erase(std::remove(host.groups.begin(), host.groups.end(), ungrouped),
                        host.groups.end());
      auto& members = raw_.groups[ungrouped].hosts;
      members.erase(std::remove(members.begin(), members.end(), h), members.end());
    } else if (!in_ungrouped && !in_other) {
      host.groups.push_back(ungrouped);
      raw_.groups[ungrouped].hosts.push_back(h);
    }
  }
}

Status Resolver::CheckCycles() {
  enum { kWhite, kGray, kBlack };
  std::vector<int> color(raw_.groups.size(), kWhite);
  std::vector<int> stack;
  std::function<Status(int)> visit = [&](int id) -> Status {
    color[id] = kGray;
    stack.push_back(id);
    for (const auto& [child_name, where] : raw_.groups[id].children) {
      int child = raw_.group_ids.at(child_name);
      if (color[child] == kGray) {
        std::string cycle;
        auto from = std::find(stack.begin(), stack.end(), child);
        for (auto it = from; it != stack.end(); ++it) cycle += raw_.group_names[*it] + " -> ";
        return Status::Error(
            ErrorKind::kInvalidInput,
            where + ": group \"" + child_name + "\" contains itself: " + cycle + child_name);
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
  for (size_t id = 0; id < raw_.groups.size(); ++id) {
    if (color[id] == kWhite) {
      Status s = visit(static_cast<int>(id));
      if (!s.ok()) return s;
    }
  }
  for (size_t id = 0; id < raw_.groups.size(); ++id) {
    for (const auto& child : raw_.groups[id].children) {
      raw_.groups[raw_.group_ids.at(child.first)].parents.push_back(raw_.group_names[id]);
    }
  }
  return Status::Ok();
}

// Ansible's depth: the longest path from "all". Ancestors are sorted the way
// Ansible combines group variables: by depth, then by name.
void Resolver::ComputeDepth(int id) {
  RawGroup& g = raw_.groups[id];
  if (g.depth >= 0) return;
  g.depth = 0;
  std::set<int> ancestors = {id};
  for (const std::string& parent : g.parents) {
    int p = raw_.group_ids.at(parent);
    ComputeDepth(p);
    g.depth = std::max(g.depth, raw_.groups[p].depth + 1);
    ancestors.insert(raw_.groups[p].ancestors.begin(), raw_.groups[p].ancestors.end());
  }
  g.ancestors.assign(ancestors.begin(), ancestors.end());
  std::sort(g.ancestors.begin(), g.ancestors.end(), [this](int a, int b) { return Before(a, b); });
}

// Applies one group's variables over those of groups applied before it. When
// it overrides a setting from a group that is not its ancestor, Ansible's
// choice (deeper group, then later name) may surprise: warn once per pair.
void Resolver::Merge(const Variables& from, int group, const std::string& host,
                     std::map<std::string, const Variable*>* into,
                     std::map<std::string, int>* setter) {
  const std::vector<int>& mine = raw_.groups[group].ancestors;
  for (const auto& [name, value] : from) {
    auto old = into->find(name);
    if (old != into->end() && old->second->text != value.text &&
        inventory_internal::IsSettingVariable(name)) {
      int other = (*setter)[name];
      if (std::find(mine.begin(), mine.end(), other) == mine.end() &&
          warned_.emplace(name, other, group).second) {
        warnings_->push_back(value.where + ": group \"" + raw_.group_names[group] + "\" sets " +
                             name + " \"" + value.text + "\", overriding \"" + old->second->text +
                             "\" from group \"" + raw_.group_names[other] + "\" at " +
                             old->second->where + " for hosts in both (first: \"" + host + "\")");
      }
    }
    (*into)[name] = &value;
    (*setter)[name] = group;
  }
}

// A host refused for a setting it cannot use as written (a Jinja template)
// may have the value in a vault file fleetreap skipped: name those files.
std::string Resolver::VaultHint(const std::vector<int>& groups, const std::string& host) const {
  std::vector<std::string> files;
  auto add = [&files](const std::map<std::string, std::vector<std::string>>& vaults,
                      const std::string& name) {
    auto it = vaults.find(name);
    if (it != vaults.end()) files.insert(files.end(), it->second.begin(), it->second.end());
  };
  for (int g : groups) add(raw_.group_vaults, raw_.group_names[g]);
  add(raw_.host_vaults, host);
  if (files.empty()) return "";
  std::string hint = "; its variables may be in the Ansible Vault file";
  hint += files.size() > 1 ? "s " : " ";
  for (size_t i = 0; i < files.size(); ++i) hint += (i ? ", " : "") + files[i];
  return hint + ", which fleetreap cannot decrypt";
}

Status Resolver::Build(Inventory* inventory) {
  if (raw_.hosts.empty()) {
    return Status::Error(ErrorKind::kInvalidInput, raw_.path + ": no hosts in the inventory");
  }
  const int all = raw_.group_ids.at("all");
  for (size_t id = 0; id < raw_.groups.size(); ++id) ComputeDepth(static_cast<int>(id));
  ReconcileUngrouped();
  for (size_t id = 0; id < raw_.groups.size(); ++id) {
    Inventory::GroupLinks links;
    for (const auto& child : raw_.groups[id].children) links.children.push_back(child.first);
    links.hosts = raw_.groups[id].hosts;
    inventory->SetGroupLinks(raw_.group_names[id], std::move(links));
  }
  // Hosts with the same direct groups share everything but their own
  // variables: resolve each combination of groups once. Ansible's order:
  // inventory group vars (all first), group_vars/all, group_vars/GROUP,
  // the host's own, host_vars/HOST.
  struct Resolved {
    std::vector<int> groups;
    std::map<std::string, const Variable*> vars;
    Host host;
  };
  std::map<std::pair<std::string, std::vector<int>>, Resolved> by_groups;
  for (size_t h = 0; h < raw_.hosts.size(); ++h) {
    RawHost& raw = raw_.hosts[h];
    const std::string& base_dir = raw.base_dir;
    std::vector<int> key = raw.groups;
    std::sort(key.begin(), key.end());
    auto [it, inserted] = by_groups.try_emplace({base_dir, std::move(key)});
    Resolved& resolved = it->second;
    if (inserted) {
      resolved.groups.push_back(all);
      for (int g : raw.groups) {
        resolved.groups.insert(resolved.groups.end(), raw_.groups[g].ancestors.begin(),
                               raw_.groups[g].ancestors.end());
      }
      std::sort(resolved.groups.begin(), resolved.groups.end(),
                [this](int a, int b) { return Before(a, b); });
      resolved.groups.erase(std::unique(resolved.groups.begin(), resolved.groups.end()),
                            resolved.groups.end());
      std::map<std::string, int> setter;
      for (int g : resolved.groups) {
        Merge(raw_.groups[g].vars, g, raw_.host_names[h], &resolved.vars, &setter);
        if (g != all) resolved.host.groups.push_back(raw_.group_names[g]);
      }
      for (int g : resolved.groups) {
        Merge(raw_.groups[g].file_vars, g, raw_.host_names[h], &resolved.vars, &setter);
      }
      std::sort(resolved.host.groups.begin(), resolved.host.groups.end());
      inventory_internal::ApplyVariables(resolved.vars, base_dir, &resolved.host);
    }
    Host host;
    if (raw.vars.empty() && raw.file_vars.empty()) {
      host = resolved.host;
    } else {
      std::map<std::string, const Variable*> vars = resolved.vars;
      for (const auto& [name, value] : raw.vars) vars[name] = &value;
      for (const auto& [name, value] : raw.file_vars) vars[name] = &value;
      host.groups = resolved.host.groups;
      inventory_internal::ApplyVariables(vars, base_dir, &host);
    }
    host.name = raw_.host_names[h];
    if (host.address.empty()) host.address = host.name;
    if (!host.problem.empty()) {
      host.problem.insert(host.problem.find(": ") + 2, "host \"" + host.name + "\": ");
      host.problem += VaultHint(resolved.groups, host.name);
    }
    host.source = raw.source;
    size_t index = inventory->AddHost(std::move(host));
    for (int g : resolved.groups) inventory->AddToGroup(raw_.group_names[g], index);
  }
  return Status::Ok();
}

}  // namespace

Status ResolveInventory(RawInventory* raw, Inventory* inventory,
                        std::vector<std::string>* warnings) {
  Resolver resolver(raw, warnings);
  resolver.AttachToAll();
  Status s = resolver.CheckCycles();
  if (!s.ok()) return s;
  return resolver.Build(inventory);
}

}  // namespace inventory_internal
}  // namespace fleetreap
