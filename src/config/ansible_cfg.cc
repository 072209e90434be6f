// ansible.cfg's [defaults], read as ansible-core 2.14's ConfigManager reads
// it: Python's configparser with ";" inline comments, and the five settings
// fleetreap shares with Ansible turned into fleetreap keys. See
// config_file.h.
#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "config_internal.h"
#include "fleetreap/base/text.h"
#include "fleetreap/config/config_file.h"

namespace fleetreap {
namespace config_internal {

bool AnsibleBoolean(const std::string& value) {
  std::string v = Trim(value);
  std::transform(v.begin(), v.end(), v.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return v == "y" || v == "yes" || v == "on" || v == "1" || v == "true" || v == "t";
}

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find(separator, begin);
    if (end == std::string::npos) end = text.size();
    std::string part = Trim(text.substr(begin, end - begin));
    if (!part.empty()) parts.push_back(part);
    begin = end + 1;
  }
  return parts;
}

}  // namespace config_internal

namespace {

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// configparser's inline comment: ";" at the start of the value or after
// whitespace.
std::string WithoutInlineComment(const std::string& value) {
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == ';' && (i == 0 || std::isspace(static_cast<unsigned char>(value[i - 1])))) {
      return Trim(value.substr(0, i));
    }
  }
  return Trim(value);
}

// Ansible's "path" and "pathlist" types: "~" expanded later by the flag, a
// relative path joined to the file's directory.
std::string AnsiblePath(const std::string& value, const std::string& cfg) {
  if (value.empty() || value[0] == '/' || value[0] == '~') return value;
  size_t slash = cfg.rfind('/');
  return slash == std::string::npos ? value : cfg.substr(0, slash + 1) + value;
}

}  // namespace

Status ParseAnsibleCfg(const std::string& text, const std::string& path,
                       std::vector<Setting>* settings) {
  std::string section;
  std::vector<Setting> found;
  int line_number = 0;
  std::string last_name;  // of the setting a continuation line would extend
  for (const std::string& raw : SplitLines(text)) {
    ++line_number;
    const std::string line = Trim(raw);
    const std::string where = path + ":" + std::to_string(line_number);
    if (line.empty() || line[0] == '#' || line[0] == ';') continue;
    if (std::isspace(static_cast<unsigned char>(raw[0])) && !last_name.empty()) {
      continue;  // a continuation line: none of fleetreap's settings take one
    }
    last_name.clear();
    if (line.front() == '[') {
      if (line.back() != ']') {
        return Status::Error(ErrorKind::kUsage, where + ": expected a [section], got \"" + line +
                                                    "\" (Python's configparser refuses it, and "
                                                    "so does Ansible)");
      }
      section = line.substr(1, line.size() - 2);
      continue;
    }
    const size_t sep = line.find_first_of("=:");
    if (sep == std::string::npos || sep == 0) {
      return Status::Error(ErrorKind::kUsage,
                           where + ": expected key = value, got \"" + line +
                               "\" (Python's configparser refuses it, and so does Ansible)");
    }
    if (section.empty()) {
      return Status::Error(ErrorKind::kUsage,
                           where + ": a setting before any [section] (configparser refuses it)");
    }
    last_name = Lower(Trim(line.substr(0, sep)));
    if (section != "defaults") continue;
    const std::string value = WithoutInlineComment(line.substr(sep + 1));
    const std::string source = where + " (" + last_name + ")";
    Setting setting;
    if (last_name == "inventory") {
      setting = {"hosts", {}, source};
      for (const std::string& part : config_internal::SplitList(value, ',')) {
        setting.values.push_back(AnsiblePath(part, path));
      }
    } else if (last_name == "remote_user") {
      setting = {"user", {value}, source};
    } else if (last_name == "private_key_file") {
      setting = {"identity", {AnsiblePath(value, path)}, source};
    } else if (last_name == "forks") {
      setting = {"forks", {value}, source};
    } else if (last_name == "host_key_checking") {
      setting = {"host-key-policy",
                 {config_internal::AnsibleBoolean(value) ? "strict" : "accept-new"},
                 source};
    } else {
      continue;
    }
    // configparser: a key given twice in a section is an error; Ansible
    // then fails to read the file.
    for (const Setting& earlier : found) {
      if (earlier.source.substr(earlier.source.rfind(" (")) == " (" + last_name + ")") {
        return Status::Error(ErrorKind::kUsage, where + ": option \"" + last_name +
                                                    "\" in section \"defaults\" already exists "
                                                    "(configparser refuses it, and so does "
                                                    "Ansible)");
      }
    }
    if (!setting.values.empty()) found.push_back(std::move(setting));
  }
  settings->insert(settings->end(), found.begin(), found.end());
  return Status::Ok();
}

}  // namespace fleetreap
