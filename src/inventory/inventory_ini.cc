// The INI inventory loader: ansible-core 2.14's ini plugin
// (plugins/inventory/ini.py) rule for rule, building a RawInventory that
// ResolveInventory turns into an Inventory. Its error texts are Ansible's,
// prefixed with "FILE:LINE: ".
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/ansible_address.h"
#include "fleetreap/inventory/inventory.h"
#include "fleetreap/inventory/python_literal.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace {

using inventory_internal::RawInventory;
using inventory_internal::Variable;
using inventory_internal::Variables;

std::string Strip(const std::string& s) {
  const char* blanks = " \t\n\r\v\f\x1c\x1d\x1e\x1f";
  size_t b = s.find_first_not_of(blanks);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(blanks) - b + 1);
}

// Python's shlex.split(line, comments=True) in POSIX mode. Returns false with
// shlex's own message in "error".
bool ShellSplit(const std::string& line, std::vector<std::string>* tokens, std::string* error) {
  std::string token;
  bool in_token = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote == '\'') {
      if (c == '\'') {
        quote = 0;
      } else {
        token += c;
      }
      continue;
    }
    if (quote == '"') {
      if (c == '"') {
        quote = 0;
      } else if (c == '\\') {
        if (++i >= line.size()) {
          *error = "No escaped character";
          return false;
        }
        if (line[i] != '"' && line[i] != '\\') token += '\\';
        token += line[i];
      } else {
        token += c;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      if (in_token) tokens->push_back(token);
      token.clear();
      in_token = false;
    } else if (c == '#') {
      break;
    } else if (c == '\'' || c == '"') {
      quote = c;
      in_token = true;
    } else if (c == '\\') {
      if (++i >= line.size()) {
        *error = "No escaped character";
        return false;
      }
      token += line[i];
      in_token = true;
    } else {
      token += c;
      in_token = true;
    }
  }
  if (quote) {
    *error = "No closing quotation";
    return false;
  }
  if (in_token) tokens->push_back(token);
  return true;
}

// The ini plugin's _parse_value: ast.literal_eval, or the text unchanged.
Variable ParseValue(const std::string& text, const std::string& where) {
  Variable v;
  v.where = where;
  PythonLiteral literal;
  if (!ParsePythonLiteral(text, &literal)) {
    v.kind = Variable::Kind::kScalar;
    v.text = text;
    return v;
  }
  using Kind = PythonLiteral::Kind;
  v.text = literal.text;
  switch (literal.kind) {
    case Kind::kNone:
      v.kind = Variable::Kind::kNull;
      v.text = "";
      break;
    case Kind::kList:
    case Kind::kTuple:
    case Kind::kSet:
      v.kind = Variable::Kind::kList;
      for (const PythonLiteral& item : literal.items) v.items.push_back(item.text);
      break;
    case Kind::kDict: v.kind = Variable::Kind::kMap; break;
    default: v.kind = Variable::Kind::kScalar;
  }
  return v;
}

const std::regex& SectionPattern() {
  static const std::regex re(R"(^\[([^:\]\s]+)(?::(\w+))?\]\s*(?:#.*)?$)");
  return re;
}

const std::regex& GroupNamePattern() {
  static const std::regex re(R"(^([^:\]\s]+)\s*(?:#.*)?$)");
  return re;
}

class IniLoader {
 public:
  IniLoader(const std::string& path, RawInventory* raw, std::vector<std::string>* warnings)
      : path_(path), warnings_(warnings), raw_(*raw) {}

  Status Parse(const std::string& text);
  RawInventory* raw() { return &raw_; }

 private:
  struct Pending {
    size_t line = 0;
    std::string state;
    std::vector<std::string> parents;
  };

  Status Error(const std::string& problem) const {
    return Status::Error(ErrorKind::kInvalidInput,
                         path_ + ":" + std::to_string(line_) + ": " + problem);
  }
  std::string Here() const { return path_ + ":" + std::to_string(line_); }
  bool Exists(const std::string& group) const { return raw_.group_ids.count(group) > 0; }
  int Group(const std::string& name) { return raw_.GroupId(name, Here(), warnings_); }
  void AddPendingChildren(const std::string& group);
  Status HostLine(const std::string& line, int group);
  Status SetVariable(const std::string& scope, const std::string& name, Variable value,
                     Variables* vars, int group);

  std::string path_;
  std::vector<std::string>* warnings_;
  RawInventory& raw_;
  size_t line_ = 0;
  std::vector<std::string> pending_order_;
  std::map<std::string, Pending> pending_;
  std::set<std::string> noted_;
};

void IniLoader::AddPendingChildren(const std::string& group) {
  for (const std::string& parent : pending_[group].parents) {
    raw_.AddChild(Group(parent), Group(group), Here());
    auto it = pending_.find(parent);
    if (it != pending_.end() && it->second.state == "children") AddPendingChildren(parent);
  }
  pending_.erase(group);
}

Status IniLoader::SetVariable(const std::string& scope, const std::string& name, Variable value,
                              Variables* vars, int group) {
  if (group >= 0 && name == "ansible_group_priority") {
    int64_t priority = 0;
    if (value.kind != Variable::Kind::kScalar ||
        !inventory_internal::ParseGroupPriority(value.text, &priority)) {
      return Error(scope + ": ansible_group_priority must be a number, got \"" + value.text + "\"");
    }
    raw_.groups[group].priority = static_cast<int>(priority);
    return Status::Ok();
  }
  Status s = inventory_internal::CheckVariable(scope, name, value);
  if (!s.ok()) return s;
  std::string note = inventory_internal::UnusedVariableNote(name, value);
  if (!note.empty() && noted_.insert(name).second) warnings_->push_back(value.where + ": " + note);
  note = inventory_internal::IgnoredPlainVariableNote(name);
  if (!note.empty() && noted_.insert(name).second) raw_.notes.push_back(value.where + ": " + note);
  note = inventory_internal::AnsibleNameTypo(name);
  if (!note.empty() && noted_.insert(name).second) {
    warnings_->push_back(value.where + ": " + scope + ": " + note);
  }
  (*vars)[name] = std::move(value);
  return Status::Ok();
}

Status IniLoader::HostLine(const std::string& line, int group) {
  std::vector<std::string> tokens;
  std::string problem;
  if (!ShellSplit(line, &tokens, &problem)) {
    return Error("Error parsing host definition '" + line + "': " + problem);
  }
  std::vector<std::string> names;
  int port = -1;
  Status s = ExpandAnsibleHostKey(tokens[0], &names, &port);
  if (!s.ok()) return Error(s.message());
  if (port >= 0) {
    s = inventory_internal::CheckVariable(
        "host \"" + names.front() + "\"", "ansible_port",
        {Variable::Kind::kScalar, std::to_string(port), {}, Here()});
    if (!s.ok()) return s;
  }
  std::string key = Strip(tokens[0]);
  if (!key.empty() && key.back() == ':' && port < 0) {
    return Error("Invalid host pattern '" + tokens[0] +
                 "' supplied, ending in ':' is not allowed, this character is reserved to "
                 "provide a port.");
  }
  std::vector<std::pair<std::string, Variable>> vars;
  for (size_t i = 1; i < tokens.size(); ++i) {
    size_t eq = tokens[i].find('=');
    if (eq == std::string::npos) {
      return Error("Expected key=value host variable assignment, got: " + tokens[i]);
    }
    std::string name = tokens[i].substr(0, eq);
    Variable value = ParseValue(tokens[i].substr(eq + 1), Here());
    auto same =
        std::find_if(vars.begin(), vars.end(), [&](const auto& v) { return v.first == name; });
    if (same != vars.end()) {
      same->second = std::move(value);
    } else {
      vars.emplace_back(name, std::move(value));
    }
  }
  for (const std::string& name : names) {
    if (Strip(name) == "---") {
      return Error("Invalid host pattern '" + tokens[0] +
                   "' supplied, '---' is normally a sign this is a YAML file.");
    }
    problem = inventory_internal::CheckHostName(name);
    if (!problem.empty()) return Error(problem);
    size_t id = raw_.AddHost(name, Here(), group, port, Here());
    for (const auto& [var, value] : vars) {
      s = SetVariable("host \"" + name + "\"", var, value, &raw_.hosts[id].vars, -1);
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

Status IniLoader::Parse(const std::string& text) {
  std::string group = "ungrouped";
  std::string state = "hosts";
  Group("all");
  for (const std::string& raw_line : SplitLinesLikePython(text)) {
    ++line_;
    const std::string line = Strip(raw_line);
    if (line.empty() || line[0] == ';' || line[0] == '#') continue;
    std::smatch m;
    if (std::regex_match(line, m, SectionPattern())) {
      group = m[1].str();
      state = m[2].matched ? m[2].str() : "hosts";
      if (state != "hosts" && state != "children" && state != "vars") {
        return Error("Section [" + group + ":" + state + "] has unknown type: " + state);
      }
      if (!Exists(group)) {
        if (state == "vars" && !pending_.count(group)) {
          pending_[group] = {line_, state, {}};
          pending_order_.push_back(group);
        }
        Group(group);
      }
      auto it = pending_.find(group);
      if (it != pending_.end() && state != "vars") {
        if (it->second.state == "children") {
          AddPendingChildren(group);
        } else {
          pending_.erase(it);
        }
      }
      continue;
    }
    if (line.front() == '[' && line.back() == ']') {
      return Error("Invalid section entry: '" + line +
                   "'. Please make sure that there are no spaces in the section entry, and "
                   "that there are no other invalid characters");
    }
    Status s;
    if (state == "hosts") {
      s = HostLine(line, Group(group));
    } else if (state == "vars") {
      size_t eq = line.find('=');
      if (eq == std::string::npos) return Error("Expected key=value, got: " + line);
      std::string name = Strip(line.substr(0, eq));
      int id = Group(group);
      s = SetVariable("group \"" + group + "\"", name,
                      ParseValue(Strip(line.substr(eq + 1)), Here()), &raw_.groups[id].vars, id);
    } else {
      if (!std::regex_match(line, m, GroupNamePattern())) {
        return Error("Expected group name, got: " + line);
      }
      std::string child = m[1].str();
      if (!Exists(child)) {
        auto [it, inserted] = pending_.try_emplace(child, Pending{line_, state, {group}});
        if (inserted) {
          pending_order_.push_back(child);
        } else {
          it->second.parents.push_back(group);
        }
      } else {
        raw_.AddChild(Group(group), Group(child), Here());
      }
    }
    if (!s.ok()) return s;
  }
  for (const std::string& name : pending_order_) {
    auto it = pending_.find(name);
    if (it == pending_.end()) continue;
    line_ = it->second.line;
    if (it->second.state == "vars") {
      return Error("Section [" + name + ":vars] not valid for undefined group: " + name);
    }
    return Error("Section [" + it->second.parents.back() +
                 ":children] includes undefined group: " + name);
  }
  return Status::Ok();
}

}  // namespace

namespace inventory_internal {

Status ParseIniInto(const std::string& text, const std::string& path, RawInventory* raw,
                    std::vector<std::string>* warnings) {
  IniLoader loader(path, raw, warnings);
  return loader.Parse(text);
}

}  // namespace inventory_internal

Status ParseIniInventory(const std::string& text, const std::string& path, Inventory* inventory,
                         std::vector<std::string>* warnings, std::vector<std::string>* notes) {
  return inventory_internal::ParseSingleSource(text, path, /*yaml=*/false, inventory, warnings,
                                               notes);
}

}  // namespace fleetreap
