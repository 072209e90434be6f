// The YAML inventory loader: the only code that knows yaml-cpp. It walks the
// document into a RawInventory (groups and hosts as written) and hands it to
// ResolveInventory. yaml-cpp exceptions are caught here and become Status
// values.
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

using inventory_internal::RawGroup;
using inventory_internal::RawHost;
using inventory_internal::RawInventory;
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

class YamlLoader {
 public:
  YamlLoader(const std::string& path, std::vector<std::string>* warnings)
      : path_(path), warnings_(warnings) {
    raw_.path = path;
  }

  Status Load(const YAML::Node& root);
  RawInventory* raw() { return &raw_; }

 private:
  std::string Where(const YAML::Node& node) const {
    YAML::Mark m = node.Mark();
    if (m.is_null()) return path_;
    return path_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }
  Status Error(const YAML::Node& at, const std::string& problem) const {
    return Status::Error(ErrorKind::kInvalidInput, Where(at) + ": " + problem);
  }
  int GroupId(const std::string& name, const std::string& where) {
    return raw_.GroupId(name, where, warnings_);
  }
  Status LoadGroup(int id, const YAML::Node& body, int nesting);
  Status LoadHosts(int group, const YAML::Node& hosts);
  Status LoadVars(const std::string& scope, const YAML::Node& node, Variables* vars);

  std::string path_;
  std::vector<std::string>* warnings_;
  RawInventory raw_;
  std::vector<std::string>& group_names_ = raw_.group_names;
  std::vector<RawGroup>& groups_ = raw_.groups;
  std::vector<std::string>& host_names_ = raw_.host_names;
  std::vector<RawHost>& hosts_ = raw_.hosts;
  std::unordered_map<std::string, size_t>& host_ids_ = raw_.host_ids;
  std::set<std::string> noted_;  // unused Ansible variables already warned about
};

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
  return Status::Ok();
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
    std::string note = inventory_internal::UnusedVariableNote(kv.first.Scalar(), var);
    if (!note.empty() && noted_.insert(kv.first.Scalar()).second) {
      warnings_->push_back(var.where + ": " + note);
    }
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

// Inside { } YAML reads "[" as the start of a list, so an unquoted host range
// there is a syntax error far from obvious: say so when the failing line or
// the one before it has a "[" after a "{".
std::string FlowRangeHint(const std::string& text, const YAML::Mark& mark) {
  if (mark.is_null()) return "";
  size_t begin = 0;
  for (int line = 0; line < mark.line - 1 && begin != std::string::npos; ++line) {
    begin = text.find('\n', begin);
    if (begin != std::string::npos) ++begin;
  }
  for (int i = 0; i < 2 && begin != std::string::npos && begin < text.size(); ++i) {
    size_t end = text.find('\n', begin);
    std::string line = text.substr(begin, end == std::string::npos ? end : end - begin);
    size_t brace = line.find('{');
    if (brace != std::string::npos && line.find('[', brace) != std::string::npos) {
      return " (a host range inside { } must be quoted: \"gpu[01:08]\": {})";
    }
    begin = end == std::string::npos ? end : end + 1;
  }
  return "";
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
    return inventory_internal::ResolveInventory(loader.raw(), inventory, warnings);
  } catch (const YAML::Exception& e) {
    std::string where = path;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::Error(ErrorKind::kInvalidInput, where + ": YAML syntax error: " + e.msg +
                                                       FlowRangeHint(text, e.mark));
  }
}

}  // namespace fleetreap
