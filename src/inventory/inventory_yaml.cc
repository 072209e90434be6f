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

#include "fleetreap/inventory/ansible_address.h"
#include "fleetreap/inventory/inventory.h"
#include "inventory_internal.h"
#include "inventory_yaml_loader.h"

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

namespace inventory_internal {
namespace {

constexpr int kMaxNesting = 64;

}  // namespace

std::vector<std::pair<YAML::Node, YAML::Node>> Entries(const YAML::Node& map) {
  std::vector<std::pair<YAML::Node, YAML::Node>> entries;
  std::unordered_map<std::string, size_t> seen;
  for (const auto& kv : map) {
    if (kv.first.IsScalar()) {
      auto [it, inserted] = seen.try_emplace(kv.first.Scalar(), entries.size());
      if (!inserted) {
        entries[it->second].second = kv.second;
        continue;
      }
    }
    entries.emplace_back(kv.first, kv.second);
  }
  return entries;
}

const char* KindName(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Sequence: return "a list";
    case YAML::NodeType::Map: return "a mapping";
    case YAML::NodeType::Scalar: return "a string";
    default: return "nothing";
  }
}

Status YamlLoader::Load(const YAML::Node& root) {
  GroupId("all", path_);
  for (const auto& kv : Entries(root)) {
    const YAML::Node& key = kv.first;
    const YAML::Node& value = kv.second;
    if (!key.IsScalar())
      return Error(key, "expected a group name, got " + std::string(KindName(key)));
    const std::string& name = key.Scalar();
    if (name == "hosts" || name == "vars" || name == "children") {
      return Error(key, "unknown top-level key \"" + name +
                            "\" (an inventory starts with \"all:\" or a group name)");
    }
    if (!value.IsNull() && !value.IsMap()) {
      return Error(key, "unknown top-level key \"" + name +
                            "\": expected a group (a mapping with hosts, children or "
                            "vars), got " +
                            KindName(value));
    }
    int id = GroupId(name, Where(key));
    Status s = LoadGroup(id, value, 0);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status YamlLoader::LoadGroup(int id, const YAML::Node& body, int nesting) {
  if (body.IsNull()) return Status::Ok();
  const std::string scope = "group \"" + raw_.group_names[id] + "\"";
  if (nesting > kMaxNesting) {
    return Error(body,
                 scope + ": groups nested more than " + std::to_string(kMaxNesting) + " deep");
  }
  if (!body.IsMap()) {
    return Error(body,
                 scope + " must be a mapping with hosts, children or vars, got " + KindName(body));
  }
  for (const auto& kv : Entries(body)) {
    const YAML::Node& key = kv.first;
    const YAML::Node& value = kv.second;
    const std::string name = key.IsScalar() ? key.Scalar() : "";
    Status s;
    if (name == "hosts") {
      s = LoadHosts(id, value);
    } else if (name == "vars") {
      s = LoadVars(scope, value, &raw_.groups[id].vars, id);
    } else if (name == "children") {
      if (!value.IsNull() && !value.IsMap()) {
        return Error(value,
                     scope + ": children must be a mapping of group names, got " + KindName(value));
      }
      for (const auto& child : Entries(value)) {
        if (!child.first.IsScalar() || child.first.Scalar().empty()) {
          return Error(child.first, scope + ": expected a group name");
        }
        int c = GroupId(child.first.Scalar(), Where(child.first));
        s = LoadGroup(c, child.second, nesting + 1);
        if (!s.ok()) return s;
        raw_.AddChild(id, c, Where(child.first));
      }
    } else {
      return Error(key,
                   scope + ": unknown key \"" + name + "\" (expected hosts, children or vars)");
    }
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status YamlLoader::LoadVars(const std::string& scope, const YAML::Node& node, Variables* vars,
                            int group) {
  if (node.IsNull()) return Status::Ok();
  if (!node.IsMap()) {
    return Error(node, scope + ": vars must be a mapping, got " + KindName(node));
  }
  for (const auto& kv : Entries(node)) {
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
    const std::string& name = kv.first.Scalar();
    if (group >= 0 && name == "ansible_group_priority") {
      int64_t priority = 0;
      if (!v.IsScalar() || !ParseGroupPriority(var.text, &priority)) {
        return Error(v,
                     scope + ": ansible_group_priority must be a number, got \"" + var.text + "\"");
      }
      raw_.groups[group].priority = static_cast<int>(priority);
      continue;
    }
    var.vault = v.Tag() == "!vault";
    Status s = CheckVariable(scope, name, var);
    if (!s.ok()) return s;
    std::string note = UnusedVariableNote(name, var);
    if (!note.empty() && noted_.insert(name).second) {
      warnings_->push_back(var.where + ": " + note);
    }
    note = IgnoredPlainVariableNote(name);
    if (!note.empty() && noted_.insert(name).second) raw_.notes.push_back(var.where + ": " + note);
    note = AnsibleNameTypo(name);
    if (!note.empty() && noted_.insert(name).second) {
      warnings_->push_back(var.where + ": " + scope + ": " + note);
    }
    (*vars)[name] = std::move(var);
  }
  return Status::Ok();
}

Status YamlLoader::LoadHosts(int group, const YAML::Node& node) {
  const std::string& group_name = raw_.group_names[group];
  if (node.IsNull()) return Status::Ok();
  if (node.IsScalar()) return LoadHost(group, node, YAML::Node());  // Ansible allows one name
  if (!node.IsMap()) {
    return Error(node, "group \"" + group_name + "\": hosts must be a mapping of host names, got " +
                           KindName(node));
  }
  for (const auto& kv : Entries(node)) {
    Status s = LoadHost(group, kv.first, kv.second);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status YamlLoader::LoadHost(int group, const YAML::Node& key, const YAML::Node& value) {
  const std::string& group_name = raw_.group_names[group];
  if (!key.IsScalar()) return Error(key, "group \"" + group_name + "\": expected a host name");
  const std::string scope = "host \"" + key.Scalar() + "\"";
  std::vector<std::string> names;
  int port = -1;
  Status s = ExpandAnsibleHostKey(key.Scalar(), &names, &port);
  if (!s.ok()) return Error(key, s.message());
  if (value && !value.IsNull() && !value.IsMap()) {
    return Error(value,
                 scope + ": expected variables (a mapping) or nothing, got " + KindName(value));
  }
  Variables vars;
  if (value) {
    s = LoadVars(scope, value, &vars);
    if (!s.ok()) return s;
  }
  const std::string source = path_ + ":" + std::to_string(key.Mark().line + 1);
  std::string port_where;
  if (port >= 0) {
    YAML::Mark m = key.Mark();
    port_where = path_ + ":" + std::to_string(m.line + 1) + ":" +
                 std::to_string(m.column + key.Scalar().rfind(':') + 2);
    s = CheckVariable(scope, "ansible_port",
                      {Variable::Kind::kScalar, std::to_string(port), {}, port_where});
    if (!s.ok()) return s;
  }
  for (const std::string& name : names) {
    std::string problem = CheckHostName(name);
    if (!problem.empty()) return Error(key, problem);
    RawHost& host = raw_.hosts[raw_.AddHost(name, source, group, port, port_where)];
    for (const auto& [var, v] : vars) {
      auto old = host.vars.find(var);
      if (old != host.vars.end() && old->second.text != v.text && IsSettingVariable(var)) {
        warnings_->push_back(v.where + ": host \"" + name + "\": " + var + " \"" + v.text +
                             "\" overrides \"" + old->second.text + "\" set at " +
                             old->second.where);
      }
      host.vars[var] = v;
    }
  }
  return Status::Ok();
}

}  // namespace inventory_internal

namespace {

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

Status SyntaxError(const std::string& path, const std::string& text, const YAML::Exception& e) {
  std::string where = path;
  if (!e.mark.is_null()) {
    where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
  }
  return Status::Error(ErrorKind::kInvalidInput,
                       where + ": YAML syntax error: " + e.msg + FlowRangeHint(text, e.mark));
}

}  // namespace

namespace inventory_internal {

Status ParseYamlInto(const std::string& text, const std::string& path, RawInventory* raw,
                     std::vector<std::string>* warnings) {
  YamlLoader loader(path, raw, warnings);
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) {
      return Status::Error(
          ErrorKind::kInvalidInput,
          path + ":1:1: expected a mapping of groups (\"all:\"), got " + KindName(root));
    }
    return loader.Load(root);
  } catch (const YAML::Exception& e) {
    return SyntaxError(path, text, e);
  }
}

}  // namespace inventory_internal

Status ParseYamlInventory(const std::string& text, const std::string& path, Inventory* inventory,
                          std::vector<std::string>* warnings, std::vector<std::string>* notes) {
  return inventory_internal::ParseSingleSource(text, path, /*yaml=*/true, inventory, warnings,
                                               notes);
}

namespace inventory_internal {

Status ParseYamlVariables(const std::string& text, const std::string& path,
                          const std::string& scope, Variables* vars,
                          std::vector<std::string>* warnings, std::vector<std::string>* notes) {
  RawInventory scratch;
  YamlLoader loader(path, &scratch, warnings);
  try {
    YAML::Node root = YAML::Load(text);
    if (root.IsNull()) return Status::Ok();
    if (!root.IsMap()) {
      return Status::Error(ErrorKind::kInvalidInput,
                           path + ":1:1: expected a mapping of variables, got " + KindName(root));
    }
    Status s = loader.LoadVariables(scope, root, vars);
    if (!s.ok()) return s;
  } catch (const YAML::Exception& e) {
    return SyntaxError(path, text, e);
  }
  notes->insert(notes->end(), loader.raw()->notes.begin(), loader.raw()->notes.end());
  return Status::Ok();
}

}  // namespace inventory_internal
}  // namespace fleetreap
