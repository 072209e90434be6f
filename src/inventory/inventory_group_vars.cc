// group_vars/ and host_vars/ beside an inventory, found as ansible-core's
// host_group_vars vars plugin and DataLoader.find_vars_files find them, and
// read with the YAML loader's variable rules. Not thread-safe (fills a
// RawInventory).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {
namespace {

namespace fs = std::filesystem;

const char* const kExtensions[] = {"", ".yml", ".yaml", ".json"};

bool IsVarsExtension(const std::string& ext) {
  return std::find(std::begin(kExtensions), std::end(kExtensions), ext) != std::end(kExtensions);
}

// Python's os.path.splitext(name)[1]: from the last dot, unless the name
// starts with its only dots.
std::string Extension(const std::string& name) {
  size_t dot = name.rfind('.');
  if (dot == std::string::npos || name.find_first_not_of('.') > dot) return "";
  return name.substr(dot);
}

// _get_dir_vars_files: sorted, hidden and backup files skipped, directories
// without an extension walked.
void DirVarsFiles(const fs::path& dir, std::vector<std::string>* found) {
  std::error_code ec;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (name[0] == '.' || name.back() == '~') continue;
    const fs::path full = dir / name;
    const std::string ext = Extension(name);
    if (fs::is_directory(full, ec) && ext.empty()) {
      DirVarsFiles(full, found);
    } else if (fs::is_regular_file(full, ec) && IsVarsExtension(ext)) {
      found->push_back(full.string());
    }
  }
}

// find_vars_files: NAME, NAME.yml, NAME.yaml, NAME.json, the first that
// exists; a directory stands for the files in it. "present" lists the
// directory's entries, so that a fleet of hosts costs one listing.
std::vector<std::string> FindVarsFiles(const fs::path& dir, const std::set<std::string>& present,
                                       const std::string& name) {
  std::vector<std::string> found;
  for (const char* ext : kExtensions) {
    const std::string file = name + ext;
    if (!present.count(file)) continue;
    std::error_code ec;
    if (fs::is_directory(dir / file, ec)) {
      DirVarsFiles(dir / file, &found);
    } else {
      found.push_back((dir / file).string());
    }
    break;
  }
  return found;
}

Status ReadFile(const std::string& path, std::string* text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return Status::Error(ErrorKind::kInvalidInput, path + ": cannot read");
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return Status::Ok();
}

// Reads every file found for one group or host, later files over earlier ones.
// A vault file is skipped: fleetreap cannot decrypt it, and "vaults" keeps
// its path for the hosts that would need a variable from it.
Status LoadEntity(const fs::path& dir, const std::set<std::string>& present,
                  const std::string& name, const std::string& scope, Variables* into,
                  std::vector<std::string>* vaults, RawInventory* raw,
                  std::vector<std::string>* warnings) {
  if (name.empty() || name[0] == '/') return Status::Ok();
  for (const std::string& file : FindVarsFiles(dir, present, name)) {
    std::string text;
    Status s = ReadFile(file, &text);
    if (!s.ok()) return s;
    if (text.rfind("$ANSIBLE_VAULT", 0) == 0) {
      raw->notes.push_back(file +
                           ": an Ansible Vault file, skipped (fleetreap cannot decrypt "
                           "it and needs it only for a setting it cannot find elsewhere)");
      vaults->push_back(file);
      continue;
    }
    Variables vars;
    s = ParseYamlVariables(text, file, scope, &vars, warnings, &raw->notes);
    if (!s.ok()) return s;
    for (auto& [key, value] : vars) (*into)[key] = std::move(value);
  }
  return Status::Ok();
}

// The entries of "base/subdir", or false when there is no such directory.
bool ListVarsDir(const std::string& base, const char* subdir, fs::path* dir,
                 std::set<std::string>* present, std::vector<std::string>* warnings) {
  *dir = fs::path(base.empty() ? "." : base) / subdir;
  std::error_code ec;
  if (!fs::exists(*dir, ec)) return false;
  if (!fs::is_directory(*dir, ec)) {
    warnings->push_back(dir->string() + ": not a directory, skipped (as Ansible does)");
    return false;
  }
  for (const auto& entry : fs::directory_iterator(*dir, ec)) {
    present->insert(entry.path().filename().string());
  }
  return true;
}

}  // namespace

Status LoadGroupAndHostVars(const std::string& base, RawInventory* raw,
                            std::vector<std::string>* warnings) {
  fs::path dir;
  std::set<std::string> present;
  if (ListVarsDir(base, "group_vars", &dir, &present, warnings)) {
    for (size_t id = 0; id < raw->groups.size(); ++id) {
      const std::string& name = raw->group_names[id];
      Variables vars;
      Status s = LoadEntity(dir, present, name, "group \"" + name + "\"", &vars,
                            &raw->group_vaults[name], raw, warnings);
      if (!s.ok()) return s;
      for (auto& [key, value] : vars) raw->groups[id].file_vars[key] = std::move(value);
    }
  }
  present.clear();
  if (ListVarsDir(base, "host_vars", &dir, &present, warnings)) {
    for (size_t id = 0; id < raw->hosts.size(); ++id) {
      const std::string& name = raw->host_names[id];
      Variables vars;
      Status s = LoadEntity(dir, present, name, "host \"" + name + "\"", &vars,
                            &raw->host_vaults[name], raw, warnings);
      if (!s.ok()) return s;
      for (auto& [key, value] : vars) raw->hosts[id].file_vars[key] = std::move(value);
    }
  }
  return Status::Ok();
}

}  // namespace inventory_internal
}  // namespace fleetreap
