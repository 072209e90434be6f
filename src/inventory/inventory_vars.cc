#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

#include "fleetreap/base/text.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {
namespace {

enum class Type { kString, kPort, kBool, kGpuCount, kMib, kList, kUnknownOwn };

// Every variable fleetreap reads, both spellings, and its type.
struct Known {
  const char* name;
  Type type;
};
constexpr Known kKnown[] = {
    {"ansible_host", Type::kString},
    {"ansible_ssh_host", Type::kString},
    {"ansible_port", Type::kPort},
    {"ansible_ssh_port", Type::kPort},
    {"ansible_user", Type::kString},
    {"ansible_ssh_user", Type::kString},
    {"ansible_ssh_private_key_file", Type::kString},
    {"ansible_private_key_file", Type::kString},
    {"ansible_become", Type::kBool},
    {"fleetreap_expected_gpus", Type::kGpuCount},
    {"fleetreap_playbook", Type::kString},
    {"fleetreap_protect", Type::kList},
    {"fleetreap_threshold_mib", Type::kMib},
};

const char kOwnNames[] =
    "fleetreap_expected_gpus, fleetreap_playbook, fleetreap_protect, "
    "fleetreap_threshold_mib";

Type TypeOf(const std::string& name, bool* known) {
  for (const Known& k : kKnown) {
    if (name == k.name) {
      *known = true;
      return k.type;
    }
  }
  *known = name.rfind("fleetreap_", 0) == 0;
  return Type::kUnknownOwn;
}

// Parses a non-negative decimal integer of at most 12 digits.
bool ParseCount(const std::string& text, int64_t* value) { return ParseDigits(text, 12, value); }

bool ParseBool(const std::string& text, bool* value) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(), [](unsigned char c) { return std::tolower(c); });
  size_t b = t.find_first_not_of(" \t\n\r\v\f");
  t = b == std::string::npos ? "" : t.substr(b, t.find_last_not_of(" \t\n\r\v\f") - b + 1);
  // Ansible's boolean(): module_utils/parsing/convert_bool.py.
  if (t == "true" || t == "yes" || t == "on" || t == "1" || t == "y" || t == "t") {
    *value = true;
    return true;
  }
  if (t == "false" || t == "no" || t == "off" || t == "0" || t == "n" || t == "f") {
    *value = false;
    return true;
  }
  return false;
}

std::string Got(const Variable& v) {
  switch (v.kind) {
    case Variable::Kind::kNull: return "nothing";
    case Variable::Kind::kList: return "a list";
    case Variable::Kind::kMap: return "a mapping";
    case Variable::Kind::kScalar: break;
  }
  return "\"" + v.text + "\"";
}

// The first of "names" that is set and not null: ansible-core's
// MAGIC_VARIABLE_MAPPING order (ansible_ssh_host before ansible_host).
const Variable* Find(const std::map<std::string, const Variable*>& vars,
                     std::initializer_list<const char*> names, std::string* name_found) {
  for (const char* name : names) {
    auto it = vars.find(name);
    if (it != vars.end() && it->second->kind != Variable::Kind::kNull) {
      *name_found = name;
      return it->second;
    }
  }
  return nullptr;
}

bool IsJinja(const std::string& text) {
  return text.find("{{") != std::string::npos || text.find("{%") != std::string::npos ||
         text.find("{#") != std::string::npos;
}

std::string ResolvePath(const std::string& path, const std::string& base_dir) {
  if (path.rfind("~/", 0) == 0) {
    const char* home = std::getenv("HOME");
    return home ? std::string(home) + path.substr(1) : path;
  }
  if (path.empty() || path[0] == '/' || path[0] == '~' || base_dir.empty()) {
    return path;
  }
  return (std::filesystem::path(base_dir) / path).lexically_normal().string();
}

}  // namespace

Status CheckVariable(const std::string& scope, const std::string& name, const Variable& value) {
  bool known = false;
  Type type = TypeOf(name, &known);
  if (!known || value.vault) return Status::Ok();  // a vault value is refused where it is used
  auto fail = [&](const std::string& problem) {
    return Status::Error(ErrorKind::kInvalidInput, value.where + ": " + scope + ": " + problem);
  };
  const bool scalar = value.kind == Variable::Kind::kScalar;
  if (value.kind == Variable::Kind::kNull && type != Type::kUnknownOwn) return Status::Ok();
  if (!JinjaProblem("", name, value).empty()) return Status::Ok();  // refused when used
  int64_t n = 0;
  bool b = false;
  switch (type) {
    case Type::kUnknownOwn:
      return fail("unknown fleetreap variable \"" + name + "\" (known: " + kOwnNames + ")");
    case Type::kString:
      if (!scalar) return fail(name + " must be a string, got " + Got(value));
      return Status::Ok();
    case Type::kPort:
      if (!scalar || !ParseCount(value.text, &n)) {
        return fail(name + " must be a port number 1-65535, got " + Got(value));
      }
      if (n < 1 || n > 65535) {
        return fail(name + " must be 1-65535, got " + value.text);
      }
      return Status::Ok();
    case Type::kBool:
      if (!scalar || !ParseBool(value.text, &b)) {
        return fail(name + " must be true or false, got " + Got(value));
      }
      return Status::Ok();
    case Type::kGpuCount:
      if (!scalar || !ParseCount(value.text, &n) || n > 1024) {
        return fail(name + " must be a GPU count 0-1024, got " + Got(value));
      }
      return Status::Ok();
    case Type::kMib:
      if (!scalar || !ParseCount(value.text, &n)) {
        return fail(name + " must be a number of MiB (0 or more), got " + Got(value));
      }
      return Status::Ok();
    case Type::kList:
      if (value.kind == Variable::Kind::kList || scalar) return Status::Ok();
      return fail(name + " must be a list of names, got " + Got(value));
  }
  return Status::Ok();
}

std::string UnusedVariableNote(const std::string& name, const Variable& value) {
  if (name == "ansible_connection") {
    if (value.text == "ssh" || value.text == "smart" || value.text == "paramiko") return "";
    return "ansible_connection \"" + value.text +
           "\" is not used: fleetreap always connects over SSH";
  }
  if (name == "ansible_ssh_common_args" || name == "ansible_ssh_extra_args" ||
      name == "ansible_ssh_args") {
    return name +
           " is not used: fleetreap passes no OpenSSH options (a ProxyJump "
           "belongs in ~/.ssh/config, read with --ssh-config)";
  }
  if (name == "ansible_password" || name == "ansible_ssh_pass" || name == "ansible_ssh_password" ||
      name == "ansible_become_password" || name == "ansible_become_pass") {
    return name + " is not used: fleetreap logs in with keys and the SSH agent only";
  }
  if (name == "ansible_become_user" || name == "ansible_become_method") {
    if (value.text == "root" || value.text == "sudo") return "";
    return name + " \"" + value.text + "\" is not used: fleetreap becomes root with sudo -n";
  }
  return "";
}

bool IsSettingVariable(const std::string& name) {
  bool known = false;
  TypeOf(name, &known);
  return known;
}

std::string JinjaProblem(const std::string& scope, const std::string& name, const Variable& value) {
  bool jinja = IsJinja(value.text);
  for (const std::string& item : value.items) jinja = jinja || IsJinja(item);
  if (!jinja) return "";
  return value.where + ": " + scope + (scope.empty() ? "" : ": ") + name + " \"" + value.text +
         "\" is a Jinja template, which fleetreap does not evaluate (write the value itself)";
}

bool ParseGroupPriority(const std::string& text, int64_t* value) {
  std::string t = text;
  size_t dot = t.find('.');
  if (dot != std::string::npos && dot > 0 &&
      t.find_first_not_of("0123456789", dot + 1) == std::string::npos) {
    t.resize(dot);  // Python's int() of a float truncates
  }
  bool negative = !t.empty() && t[0] == '-';
  if (negative || (!t.empty() && t[0] == '+')) t.erase(0, 1);
  if (!ParseCount(t, value)) return false;
  if (negative) *value = -*value;
  return true;
}

std::string IgnoredPlainVariableNote(const std::string& name) {
  if (name != "host" && name != "port" && name != "user" && name != "identity_file" &&
      name != "become") {
    return "";
  }
  return "variable \"" + name +
         "\" is not a connection setting (Ansible's are ansible_host, "
         "ansible_port, ansible_user, ansible_ssh_private_key_file, ansible_become); ignored";
}

void ApplyVariables(const std::map<std::string, const Variable*>& vars, const std::string& base_dir,
                    Host* host) {
  int64_t n = 0;
  std::string name;
  // Every value fleetreap uses must be usable as it stands.
  auto use = [&](std::initializer_list<const char*> names) -> const Variable* {
    const Variable* v = Find(vars, names, &name);
    if (v == nullptr) return nullptr;
    std::string problem = v->vault ? v->where + ": " + name +
                                         " is encrypted with Ansible Vault (!vault), which "
                                         "fleetreap cannot decrypt (write the value itself)"
                                   : JinjaProblem("", name, *v);
    if (problem.empty()) return v;
    if (host->problem.empty()) host->problem = problem;
    return nullptr;
  };
  if (const Variable* v = use({"ansible_ssh_host", "ansible_host"})) host->address = v->text;
  if (host->address.empty()) host->address = host->name;
  if (const Variable* v = use({"ansible_ssh_port", "ansible_port"})) {
    if (ParseCount(v->text, &n)) host->port = static_cast<int>(n);
  }
  if (const Variable* v = use({"ansible_ssh_user", "ansible_user"})) host->user = v->text;
  if (const Variable* v = use({"ansible_ssh_private_key_file", "ansible_private_key_file"})) {
    host->identity_file = ResolvePath(v->text, base_dir);
  }
  if (const Variable* v = use({"ansible_become"})) ParseBool(v->text, &host->become);
  if (const Variable* v = use({"fleetreap_expected_gpus"})) {
    if (ParseCount(v->text, &n)) host->expected_gpus = static_cast<int>(n);
  }
  if (const Variable* v = use({"fleetreap_playbook"})) {
    host->playbook = ResolvePath(v->text, base_dir);
  }
  if (const Variable* v = use({"fleetreap_protect"})) {
    host->protect = v->kind == Variable::Kind::kList ? v->items : std::vector<std::string>{v->text};
  }
  if (const Variable* v = use({"fleetreap_threshold_mib"})) {
    if (ParseCount(v->text, &n)) host->threshold_mib = n;
  }
  for (const auto& [key, value] : vars) host->vars[key] = value->text;
}

std::string CheckHostName(const std::string& name) {
  if (name.empty()) return "empty host name";
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' &&
        c != ':') {
      return "\"" + name + "\" is not a valid host name";
    }
  }
  return "";
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace inventory_internal
}  // namespace fleetreap
