#include "inventory_internal.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <filesystem>

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
    {"host", Type::kString},
    {"ansible_port", Type::kPort},
    {"ansible_ssh_port", Type::kPort},
    {"port", Type::kPort},
    {"ansible_user", Type::kString},
    {"ansible_ssh_user", Type::kString},
    {"user", Type::kString},
    {"ansible_ssh_private_key_file", Type::kString},
    {"ansible_private_key_file", Type::kString},
    {"identity_file", Type::kString},
    {"ansible_become", Type::kBool},
    {"become", Type::kBool},
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
bool ParseCount(const std::string& text, int64_t* value) {
  if (text.empty() || text.size() > 12) return false;
  if (!std::all_of(text.begin(), text.end(),
                   [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  *value = std::stoll(text);
  return true;
}

bool ParseBool(const std::string& text, bool* value) {
  std::string t = text;
  std::transform(t.begin(), t.end(), t.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (t == "true" || t == "yes" || t == "on" || t == "1") {
    *value = true;
    return true;
  }
  if (t == "false" || t == "no" || t == "off" || t == "0") {
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

const Variable* Find(const std::map<std::string, const Variable*>& vars,
                     std::initializer_list<const char*> names) {
  for (const char* name : names) {
    auto it = vars.find(name);
    if (it != vars.end()) return it->second;
  }
  return nullptr;
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

Status CheckVariable(const std::string& scope, const std::string& name,
                     const Variable& value) {
  bool known = false;
  Type type = TypeOf(name, &known);
  if (!known) return Status::Ok();
  auto fail = [&](const std::string& problem) {
    return Status::Error(ErrorKind::kInvalidInput,
                         value.where + ": " + scope + ": " + problem);
  };
  const bool scalar = value.kind == Variable::Kind::kScalar;
  int64_t n = 0;
  bool b = false;
  switch (type) {
    case Type::kUnknownOwn:
      return fail("unknown fleetreap variable \"" + name + "\" (known: " +
                  kOwnNames + ")");
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
        return fail(name + " must be a number of MiB (0 or more), got " +
                    Got(value));
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
    return name + " is not used: fleetreap passes no OpenSSH options (a ProxyJump "
                  "belongs in ~/.ssh/config, read with --ssh-config)";
  }
  if (name == "ansible_password" || name == "ansible_ssh_pass" ||
      name == "ansible_ssh_password" || name == "ansible_become_password" ||
      name == "ansible_become_pass") {
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

void ApplyVariables(const std::map<std::string, const Variable*>& vars,
                    const std::string& base_dir, Host* host) {
  int64_t n = 0;
  if (const Variable* v = Find(vars, {"ansible_host", "ansible_ssh_host", "host"})) {
    host->address = v->text;
  }
  if (host->address.empty()) host->address = host->name;
  if (const Variable* v = Find(vars, {"ansible_port", "ansible_ssh_port", "port"})) {
    if (ParseCount(v->text, &n)) host->port = static_cast<int>(n);
  }
  if (const Variable* v = Find(vars, {"ansible_user", "ansible_ssh_user", "user"})) {
    host->user = v->text;
  }
  if (const Variable* v = Find(vars, {"ansible_ssh_private_key_file",
                                      "ansible_private_key_file", "identity_file"})) {
    host->identity_file = ResolvePath(v->text, base_dir);
  }
  if (const Variable* v = Find(vars, {"ansible_become", "become"})) {
    ParseBool(v->text, &host->become);
  }
  if (const Variable* v = Find(vars, {"fleetreap_expected_gpus"})) {
    if (ParseCount(v->text, &n)) host->expected_gpus = static_cast<int>(n);
  }
  if (const Variable* v = Find(vars, {"fleetreap_playbook"})) {
    host->playbook = ResolvePath(v->text, base_dir);
  }
  if (const Variable* v = Find(vars, {"fleetreap_protect"})) {
    host->protect = v->kind == Variable::Kind::kList
                        ? v->items
                        : std::vector<std::string>{v->text};
    if (v->kind == Variable::Kind::kNull) host->protect.clear();
  }
  if (const Variable* v = Find(vars, {"fleetreap_threshold_mib"})) {
    if (ParseCount(v->text, &n)) host->threshold_mib = n;
  }
  for (const auto& [name, value] : vars) host->vars[name] = value->text;
}

std::string CheckHostName(const std::string& name) {
  if (name.empty()) return "empty host name";
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' &&
        c != '-' && c != ':') {
      return "\"" + name + "\" is not a valid host name";
    }
  }
  return "";
}

bool SplitHostPort(const std::string& key, std::string* name, std::string* port,
                   size_t* colon) {
  int depth = 0;
  size_t at = std::string::npos, colons = 0;
  for (size_t i = 0; i < key.size(); ++i) {
    if (key[i] == '[') ++depth;
    if (key[i] == ']') --depth;
    if (key[i] == ':' && depth == 0) {
      at = i;
      ++colons;
    }
  }
  if (colons != 1) {
    *name = key;
    port->clear();
    *colon = std::string::npos;
    return false;
  }
  *name = key.substr(0, at);
  *port = key.substr(at + 1);
  *colon = at;
  return true;
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  if (slash == std::string::npos) return "";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace inventory_internal
}  // namespace fleetreap
