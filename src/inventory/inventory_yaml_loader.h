// YamlLoader: walks a YAML (or JSON) inventory document into a RawInventory
// that may already hold earlier sources; shared by the YAML inventory loader
// and the inventory script output reader. Internal to src/inventory/;
// used by one thread.
#pragma once

#include <yaml-cpp/yaml.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/base/status.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {

/// A mapping's entries as Ansible's YAML loader keeps them: a key given twice
/// stays where it first appeared and takes its last value.
std::vector<std::pair<YAML::Node, YAML::Node>> Entries(const YAML::Node& map);

/// "a list", "a mapping", "a string" or "nothing", for messages.
const char* KindName(const YAML::Node& node);

class YamlLoader {
 public:
  /// Fills "raw", which must outlive the loader; "path" names the text in
  /// messages ("FILE:LINE:COL: ...").
  YamlLoader(const std::string& path, RawInventory* raw, std::vector<std::string>* warnings)
      : path_(path), raw_(*raw), warnings_(warnings) {}

  /// An inventory document: a mapping of groups.
  Status Load(const YAML::Node& root);
  /// Variables of "scope" (a group's when "group" is its id, else -1) into
  /// "vars", checked as CheckVariable checks them.
  Status LoadVariables(const std::string& scope, const YAML::Node& node, Variables* vars,
                       int group = -1) {
    return LoadVars(scope, node, vars, group);
  }
  RawInventory* raw() { return &raw_; }
  /// "FILE:LINE:COL" of "node", or the file alone.
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

 private:
  Status LoadGroup(int id, const YAML::Node& body, int nesting);
  Status LoadHosts(int group, const YAML::Node& node);
  Status LoadHost(int group, const YAML::Node& key, const YAML::Node& value);
  Status LoadVars(const std::string& scope, const YAML::Node& node, Variables* vars,
                  int group = -1);

  std::string path_;
  RawInventory& raw_;
  std::vector<std::string>* warnings_;
  std::set<std::string> noted_;  // unused Ansible variables already warned about
};

}  // namespace inventory_internal
}  // namespace fleetreap
