// The fleetreap config file (YAML, through yaml-cpp, whose exceptions stop
// here), the FLEETREAP_* variables, and LoadDefaults, which reads every
// layer in precedence order. See config_file.h.
#include "fleetreap/config/config_file.h"

#include <sys/stat.h>
#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "config_internal.h"
#include "fleetreap/base/closest_name.h"
#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

bool IsPathKey(const std::string& key) {
  return key == "hosts" || key == "identity" || key == "known-hosts" || key == "ssh-config-file" ||
         key == "playbook" || key == "log-dir";
}

bool IsListKey(const std::string& key) { return key == "hosts" || key == "protect"; }

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

// A relative path in a file is relative to that file's directory; a host
// list, a Slurm spec and "~/" paths stay as written.
std::string Anchored(const std::string& key, const std::string& value, const std::string& file) {
  if (!IsPathKey(key) || value.empty() || value[0] == '/' || value[0] == '~') return value;
  if (key == "hosts" && (value.find(',') != std::string::npos || value.rfind("slurm:", 0) == 0)) {
    return value;
  }
  return DirectoryOf(file) + value;
}

std::string UnknownKey(const std::string& key) {
  const std::string best = ClosestName(key, ConfigKeys());
  if (!best.empty()) return "unknown setting \"" + key + "\" (did you mean " + best + "?)";
  return "unknown setting \"" + key + "\" (known: " + Join(ConfigKeys(), ", ") + ")";
}

std::string Where(const std::string& path, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return path;
  return path + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
}

Status ReadIfExists(const std::string& path, bool* exists, std::string* text) {
  struct stat st {};
  *exists = !path.empty() && stat(path.c_str(), &st) == 0;
  if (!*exists) return Status::Ok();
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  if (in) buffer << in.rdbuf();
  if (!in || in.bad() || S_ISDIR(st.st_mode)) {
    const int error = S_ISDIR(st.st_mode) ? EISDIR : (errno ? errno : EIO);
    return Status::Error(ErrorKind::kUsage, path + ": cannot read: " + std::strerror(error));
  }
  *text = buffer.str();
  return Status::Ok();
}

std::string Get(const Environment& env, const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

}  // namespace

const std::vector<std::string>& ConfigKeys() {
  static const std::vector<std::string> keys = {"hosts",
                                                "forks",
                                                "connect-timeout",
                                                "command-timeout",
                                                "host-timeout",
                                                "deadline",
                                                "retries",
                                                "user",
                                                "identity",
                                                "known-hosts",
                                                "host-key-policy",
                                                "no-agent",
                                                "ssh-config",
                                                "ssh-config-file",
                                                "become",
                                                "playbook",
                                                "protect",
                                                "log-dir",
                                                "color"};
  return keys;
}

bool IsSwitchKey(const std::string& key) {
  return key == "no-agent" || key == "ssh-config" || key == "become";
}

Status ParseConfigYaml(const std::string& text, const std::string& path,
                       std::vector<Setting>* settings) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    std::string where = path;
    if (!e.mark.is_null()) {
      where += ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1);
    }
    return Status::Error(ErrorKind::kUsage, where + ": YAML syntax error: " + e.msg);
  }
  if (root.IsNull()) return Status::Ok();
  if (!root.IsMap()) {
    return Status::Error(ErrorKind::kUsage,
                         path + ":1:1: expected a mapping of settings (forks: 16, ...)");
  }
  for (const auto& kv : root) {
    const YAML::Node& k = kv.first;
    const YAML::Node& v = kv.second;
    std::string key = k.IsScalar() ? k.Scalar() : "";
    std::replace(key.begin(), key.end(), '_', '-');
    const auto& keys = ConfigKeys();
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      return Status::Error(ErrorKind::kUsage, Where(path, k) + ": " + UnknownKey(key));
    }
    Setting setting;
    setting.key = key;
    setting.source = Where(path, k);
    if (v.IsScalar()) {
      setting.values.push_back(Anchored(key, v.Scalar(), path));
    } else if (v.IsSequence() && IsListKey(key)) {
      for (const YAML::Node& item : v) {
        if (!item.IsScalar()) {
          return Status::Error(ErrorKind::kUsage,
                               Where(path, item) + ": " + key + ": expected a list of strings");
        }
        setting.values.push_back(Anchored(key, item.Scalar(), path));
      }
    } else {
      return Status::Error(ErrorKind::kUsage,
                           Where(path, v.Mark().is_null() ? k : v) + ": " + key + ": expected " +
                               (IsListKey(key) ? "a value or a list" : "a single value"));
    }
    if (IsSwitchKey(key)) {
      const std::string b = setting.values[0];
      if (b != "true" && b != "false" && b != "yes" && b != "no") {
        return Status::Error(ErrorKind::kUsage, setting.source + ": " + key +
                                                    ": expected true or false, got \"" + b + "\"");
      }
      setting.values[0] = b == "true" || b == "yes" ? "true" : "false";
    }
    settings->push_back(std::move(setting));
  }
  return Status::Ok();
}

Status LoadDefaults(const ConfigPlaces& places, std::vector<Setting>* settings,
                    std::vector<std::string>* notes) {
  const Environment& env = places.env;
  for (const std::string& key : ConfigKeys()) {
    std::string name = "FLEETREAP_" + key;
    std::transform(name.begin(), name.end(), name.begin(),
                   [](char c) { return c == '-' ? '_' : static_cast<char>(std::toupper(c)); });
    auto it = env.find(name);
    if (it == env.end() || it->second.empty()) continue;
    std::string value = it->second;
    if (IsSwitchKey(key)) {
      if (value == "1" || value == "yes") value = "true";
      if (value == "0" || value == "no") value = "false";
      if (value != "true" && value != "false") {
        return Status::Error(ErrorKind::kUsage,
                             name + ": expected true or false, got \"" + it->second + "\"");
      }
    }
    settings->push_back({key, {value}, name});
  }
  const std::string home = Get(env, "HOME");
  const std::string xdg = Get(env, "XDG_CONFIG_HOME");
  const std::string user_dir = !xdg.empty() ? xdg : home.empty() ? "" : home + "/.config";
  for (const std::string& file :
       {user_dir.empty() ? std::string() : user_dir + "/fleetreap/config.yaml",
        places.system_file}) {
    bool exists = false;
    std::string text;
    Status s = ReadIfExists(file, &exists, &text);
    if (s.ok() && exists) s = ParseConfigYaml(text, file, settings);
    if (!s.ok()) return s;
  }
  const struct {
    const char* name;
    const char* key;
  } ansible_env[] = {{"ANSIBLE_INVENTORY", "hosts"},
                     {"ANSIBLE_REMOTE_USER", "user"},
                     {"ANSIBLE_PRIVATE_KEY_FILE", "identity"},
                     {"ANSIBLE_FORKS", "forks"},
                     {"ANSIBLE_HOST_KEY_CHECKING", "host-key-policy"}};
  for (const auto& [name, key] : ansible_env) {
    std::string value = Get(env, name);
    if (value.empty()) continue;
    Setting setting{key, {}, name};
    if (setting.key == "hosts") {
      setting.values = config_internal::SplitList(value, ',');
    } else if (setting.key == "host-key-policy") {
      setting.values.push_back(config_internal::AnsibleBoolean(value) ? "strict" : "accept-new");
    } else {
      setting.values.push_back(value);
    }
    if (!setting.values.empty()) settings->push_back(std::move(setting));
  }
  std::vector<std::string> candidates;
  std::string config = Get(env, "ANSIBLE_CONFIG");
  if (!config.empty()) {
    struct stat st {};
    if (stat(config.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) config += "/ansible.cfg";
    candidates.push_back(config);
  }
  if (!places.cwd.empty()) {
    struct stat st {};
    if (stat(places.cwd.c_str(), &st) == 0 && (st.st_mode & S_IWOTH)) {
      if (notes && stat((places.cwd + "/ansible.cfg").c_str(), &st) == 0) {
        notes->push_back(places.cwd +
                         "/ansible.cfg: not read: the directory is world-writable "
                         "(Ansible ignores it too)");
      }
    } else if (stat((places.cwd + "/ansible.cfg").c_str(), &st) == 0 && st.st_uid != 0 &&
               st.st_uid != geteuid()) {
      // It may name inventory scripts and turn host key checking off.
      if (notes) {
        notes->push_back(places.cwd + "/ansible.cfg: not read: it belongs to uid " +
                         std::to_string(st.st_uid) + ", neither you nor root");
      }
    } else {
      candidates.push_back(places.cwd + "/ansible.cfg");
    }
  }
  if (!home.empty()) candidates.push_back(home + "/.ansible.cfg");
  candidates.push_back(places.system_ansible_cfg);
  for (const std::string& file : candidates) {
    bool exists = false;
    std::string text;
    Status s = ReadIfExists(file, &exists, &text);
    if (!s.ok()) return s;
    if (exists) return ParseAnsibleCfg(text, file, settings);
  }
  return Status::Ok();
}

}  // namespace fleetreap
