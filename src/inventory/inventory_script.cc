// What an inventory script prints for --list, read as ansible-core 2.14's
// script plugin (plugins/inventory/script.py) reads it: a JSON object of
// groups, each a list of hosts or an object with hosts, vars and children
// (an object with none of those is one host of that name with those
// variables), and _meta.hostvars with every host's variables; without it each
// host is asked with --host NAME. ansible-inventory --list prints the same
// shape. Parsed with yaml-cpp (JSON is YAML), whose exceptions stop here.
// Not thread-safe (fills a RawInventory).
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "inventory_internal.h"
#include "inventory_yaml_loader.h"

namespace fleetreap {
namespace inventory_internal {
namespace {

// Neither missing nor null (a default Node counts as null).
bool Present(const YAML::Node& node) { return node.IsDefined() && !node.IsNull(); }

class ScriptOutputReader {
 public:
  ScriptOutputReader(const std::string& path, RawInventory* raw, std::vector<std::string>* warnings)
      : path_(path), raw_(*raw), loader_(path, raw, warnings) {}

  Status Read(const YAML::Node& root, const ScriptHostVars* host_vars);

 private:
  Status Group(const std::string& name, const YAML::Node& key, const YAML::Node& data);
  Status HostVars(const std::string& host, const YAML::Node& vars);

  std::string path_;
  RawInventory& raw_;
  YamlLoader loader_;
  std::vector<std::string> hosts_;  // in the order they were first listed
};

Status ScriptOutputReader::Read(const YAML::Node& root, const ScriptHostVars* host_vars) {
  if (!root.IsMap()) {
    return Status::Error(ErrorKind::kInvalidInput,
                         path_ + ": expected a JSON object of groups, got " + KindName(root));
  }
  loader_.GroupId("all", path_);
  YAML::Node meta;
  bool has_meta = false;
  for (const auto& [key, value] : Entries(root)) {
    if (!key.IsScalar()) return loader_.Error(key, "expected a group name");
    if (key.Scalar() == "_meta") {
      if (value.IsMap() && value["hostvars"]) {
        meta.reset(value["hostvars"]);
        has_meta = true;
      }
      continue;
    }
    Status s = Group(key.Scalar(), key, value);
    if (!s.ok()) return s;
  }
  if (has_meta && !meta.IsNull() && !meta.IsMap()) {
    return loader_.Error(
        meta, "_meta: hostvars must be an object of hosts, got " + std::string(KindName(meta)));
  }
  for (const std::string& host : hosts_) {
    if (has_meta) {
      const YAML::Node& all = meta;
      if (all.IsMap() && all[host]) {
        Status s = HostVars(host, all[host]);
        if (!s.ok()) return s;
      }
      continue;
    }
    if (host_vars == nullptr) continue;
    std::string text;
    Status s = (*host_vars)(host, &text);
    if (!s.ok()) return s;
    if (text.find_first_not_of(" \t\r\n") == std::string::npos) continue;
    YAML::Node vars;
    try {
      vars = YAML::Load(text);
    } catch (const YAML::Exception& e) {
      return Status::Error(ErrorKind::kInvalidInput,
                           path_ + ": --host " + host + " printed what is not JSON: " + e.msg);
    }
    s = HostVars(host, vars);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status ScriptOutputReader::Group(const std::string& name, const YAML::Node& key,
                                 const YAML::Node& data) {
  const int id = loader_.GroupId(name, loader_.Where(key));
  const std::string scope = "group \"" + name + "\"";
  // Simplified syntax: an object with none of the three keys is a host of
  // the group's name, with these variables.
  const bool plain = !data.IsMap();
  const bool simple = !plain && !data["hosts"] && !data["vars"] && !data["children"];
  YAML::Node one(YAML::NodeType::Sequence);
  one.push_back(name);
  const YAML::Node hosts = plain ? data : simple ? one : data["hosts"];
  const YAML::Node vars = simple ? data : plain ? YAML::Node() : data["vars"];
  const YAML::Node children = plain || simple ? YAML::Node() : data["children"];
  if (hosts.IsDefined()) {
    if (!hosts.IsSequence()) {
      return loader_.Error(data, scope + ": hosts must be a list of host names, got " +
                                     std::string(KindName(hosts)));
    }
    for (const YAML::Node& host : hosts) {
      if (!host.IsScalar()) return loader_.Error(host, scope + ": expected a host name");
      std::string problem = CheckHostName(host.Scalar());
      if (!problem.empty()) return loader_.Error(host, problem);
      const std::string source =
          path_ + (host.Mark().is_null() ? "" : ":" + std::to_string(host.Mark().line + 1));
      if (!raw_.host_ids.count(host.Scalar())) hosts_.push_back(host.Scalar());
      raw_.AddHost(host.Scalar(), source, id, -1, "");
    }
  }
  if (Present(vars)) {
    if (!vars.IsMap()) {
      return loader_.Error(vars, scope + ": vars must be an object, got " + KindName(vars));
    }
    Status s = loader_.LoadVariables(scope, vars, &raw_.groups[id].vars, id);
    if (!s.ok()) return s;
  }
  if (Present(children)) {
    if (!children.IsSequence() && !children.IsMap()) {
      return loader_.Error(children, scope + ": children must be a list of group names, got " +
                                         std::string(KindName(children)));
    }
    for (const auto& child : children) {
      const YAML::Node& node = children.IsMap() ? child.first : child;
      if (!node.IsScalar() || node.Scalar().empty()) {
        return loader_.Error(node, scope + ": expected a group name");
      }
      raw_.AddChild(id, loader_.GroupId(node.Scalar(), loader_.Where(node)), loader_.Where(node));
    }
  }
  return Status::Ok();
}

Status ScriptOutputReader::HostVars(const std::string& host, const YAML::Node& vars) {
  const std::string scope = "host \"" + host + "\"";
  if (!vars.IsMap() && !vars.IsNull()) {
    return loader_.Error(vars, scope + ": variables must be an object, got " + KindName(vars));
  }
  return loader_.LoadVariables(scope, vars, &raw_.hosts[raw_.host_ids.at(host)].vars);
}

}  // namespace

Status ParseScriptOutputInto(const std::string& text, const std::string& path,
                             const ScriptHostVars* host_vars, RawInventory* raw,
                             std::vector<std::string>* warnings) {
  ScriptOutputReader reader(path, raw, warnings);
  try {
    return reader.Read(YAML::Load(text), host_vars);
  } catch (const YAML::Exception& e) {
    std::string where = path;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::Error(ErrorKind::kInvalidInput, where + ": not JSON: " + e.msg);
  }
}

bool YamlPluginName(const std::string& text, std::string* plugin) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap() || !root["plugin"]) return false;
    *plugin = root["plugin"].IsScalar() ? root["plugin"].Scalar() : "?";
    return true;
  } catch (const YAML::Exception&) {
    return false;
  }
}

bool IsInventoryListOutput(const std::string& text) {
  try {
    YAML::Node root = YAML::Load(text);
    return root.IsMap() && root["_meta"] && root["_meta"].IsMap() && root["_meta"]["hostvars"];
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace inventory_internal
}  // namespace fleetreap
