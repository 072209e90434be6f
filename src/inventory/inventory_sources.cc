// LoadInventorySources and LoadInventory: what each -i value is (a host
// list, a directory, an inventory script, an inventory plugin file, the JSON
// of ansible-inventory --list, or a YAML or INI file), decided as
// ansible-core's InventoryManager and its plugins decide it, every source
// read into one RawInventory, then group_vars/ and host_vars/ beside each
// source, then the resolution. Programs are run only through the
// InventoryProgram the caller passes. Not thread-safe (one load per call).
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/ansible_address.h"
#include "fleetreap/inventory/inventory.h"
#include "inventory_internal.h"

namespace fleetreap {
namespace inventory_internal {
namespace {

namespace fs = std::filesystem;

constexpr int kMaxDirectoryDepth = 32;

// INVENTORY_IGNORE_EXTS as ansible-core 2.14 sets it by default (REJECT_EXTS
// and .orig .ini .cfg .retry), matched at the end of a directory entry's name.
constexpr const char* kIgnoredEndings[] = {".pyc", ".pyo", ".swp",  ".bak", "~",    ".rpm",  ".md",
                                           ".txt", ".rst", ".orig", ".ini", ".cfg", ".retry"};

bool IsIgnoredEntry(const std::string& name) {
  if (name.empty() || name[0] == '.') return true;
  if (name == "host_vars" || name == "group_vars" || name == "vars_plugins") return true;
  for (const char* ending : kIgnoredEndings) {
    const size_t n = std::strlen(ending);
    if (name.size() >= n && name.compare(name.size() - n, n, ending) == 0) return true;
  }
  return false;
}

Status ReadText(const std::string& path, std::string* text) {
  std::ifstream file(path, std::ios::binary);
  if (file) {
    std::ostringstream buffer;
    buffer << file.rdbuf();
    *text = buffer.str();
  }
  if (!file || file.bad()) {
    int error = errno;
    return Status::Error(ErrorKind::kInvalidInput,
                         path + ": cannot read: " + std::strerror(error ? error : EIO));
  }
  return Status::Ok();
}

// A file that fails to parse as YAML is still reported as YAML when it looks
// like a mapping was meant: some line ends in ":" or has ": " in it.
bool LooksLikeYaml(const std::string& text) {
  for (std::string line : SplitLines(text)) {
    size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) {
      line.pop_back();
    }
    if (!line.empty() && (line.back() == ':' || line.find(": ") != std::string::npos)) {
      return true;
    }
  }
  return false;
}

std::string Extension(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  const size_t dot = name.rfind('.');
  return dot == std::string::npos || dot == 0 ? "" : name.substr(dot);
}

// Ansible's yaml plugin on *.yaml, *.yml, *.json and files with no
// extension, then its ini plugin on anything.
Status ParseStaticFile(const std::string& text, const std::string& path, RawInventory* raw,
                       std::vector<std::string>* warnings) {
  const std::string ext = Extension(path);
  if (ext == ".yaml" || ext == ".yml" || ext == ".json") {
    return ParseYamlInto(text, path, raw, warnings);
  }
  YamlShape shape = ext.empty() ? ProbeYaml(text) : YamlShape::kOther;
  if (shape == YamlShape::kMapping) return ParseYamlInto(text, path, raw, warnings);
  RawInventory attempt = *raw;
  Status ini = ParseIniInto(text, path, &attempt, warnings);
  if (ini.ok()) {
    *raw = std::move(attempt);
  } else if (shape == YamlShape::kSyntaxError && LooksLikeYaml(text)) {
    return ParseYamlInto(text, path, raw, warnings);
  }
  return ini;
}

class SourceReader {
 public:
  SourceReader(InventoryProgram* program, RawInventory* raw, std::vector<std::string>* warnings)
      : program_(program), raw_(*raw), warnings_(warnings) {}

  /// One -i value; "*vars_dir" gets where its group_vars/ are ("" and false
  /// for a host list, which has none).
  Status ReadSource(const std::string& source, std::string* vars_dir, bool* has_vars);

 private:
  Status ReadPath(const std::string& path, int depth);
  Status ReadFile(const std::string& path);
  Status ReadScript(const std::string& path, const std::string& text);
  Status ReadPluginFile(const std::string& path, const std::string& plugin);
  Status ReadProgramOutput(const std::vector<std::string>& argv, const std::string& name,
                           bool ask_hosts);

  InventoryProgram* program_;
  RawInventory& raw_;
  std::vector<std::string>* warnings_;
};

Status SourceReader::ReadSource(const std::string& source, std::string* vars_dir, bool* has_vars) {
  std::error_code ec;
  if (source.find(',') != std::string::npos && !fs::exists(source, ec)) {
    *has_vars = false;
    return ParseHostListInto(source, &raw_, warnings_);
  }
  *has_vars = true;
  *vars_dir = fs::is_directory(source, ec) ? source : DirectoryOf(source);
  return ReadPath(source, 0);
}

Status SourceReader::ReadPath(const std::string& path, int depth) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return ReadFile(path);
  if (depth >= kMaxDirectoryDepth) {
    return Status::Error(ErrorKind::kInvalidInput,
                         path + ": inventory directories nested more than " +
                             std::to_string(kMaxDirectoryDepth) + " deep (a symlink loop?)");
  }
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(path, ec)) {
    names.push_back(entry.path().filename().string());
  }
  if (ec) {
    return Status::Error(ErrorKind::kInvalidInput, path + ": cannot read: " + ec.message());
  }
  std::sort(names.begin(), names.end());
  for (const std::string& name : names) {
    if (IsIgnoredEntry(name)) continue;
    const std::string full = path + (path.back() == '/' ? "" : "/") + name;
    if (!fs::is_directory(full, ec) && !fs::is_regular_file(full, ec)) continue;
    Status s = ReadPath(full, depth + 1);
    if (!s.ok()) return s;
  }
  return Status::Ok();
}

Status SourceReader::ReadFile(const std::string& path) {
  std::string text;
  Status s = ReadText(path, &text);
  if (!s.ok()) return s;
  raw_.base_dir = DirectoryOf(path);
  // The script plugin comes first: an executable the kernel can start (an
  // interpreter line or an ELF binary); Ansible's exec of anything else fails
  // and it goes on to the other plugins, so fleetreap never runs that.
  const bool startable = text.rfind("#!", 0) == 0 || text.rfind(
                                                         "\x7f"
                                                         "ELF",
                                                         0) == 0;
  if (startable && access(path.c_str(), X_OK) == 0) return ReadScript(path, text);
  const std::string ext = Extension(path);
  // The textual checks spare a large inventory two more YAML parses.
  if ((ext == ".yml" || ext == ".yaml") && text.find("plugin") != std::string::npos) {
    std::string plugin;
    if (YamlPluginName(text, &plugin)) return ReadPluginFile(path, plugin);
  }
  if (text.find("_meta") != std::string::npos && IsInventoryListOutput(text)) {
    return ParseScriptOutputInto(text, path, nullptr, &raw_, warnings_);
  }
  return ParseStaticFile(text, path, &raw_, warnings_);
}

Status SourceReader::ReadProgramOutput(const std::vector<std::string>& argv,
                                       const std::string& name, bool ask_hosts) {
  std::string out;
  Status s = program_->Run(argv, &out);
  if (!s.ok()) return s;
  ScriptHostVars host_vars = [this, &argv](const std::string& host, std::string* text) {
    return program_->Run({argv[0], "--host", host}, text);
  };
  RawInventory attempt = raw_;
  std::vector<std::string> warnings;
  s = ParseScriptOutputInto(out, name, ask_hosts ? &host_vars : nullptr, &attempt, &warnings);
  if (!s.ok()) return s;
  raw_ = std::move(attempt);
  warnings_->insert(warnings_->end(), warnings.begin(), warnings.end());
  return Status::Ok();
}

Status SourceReader::ReadScript(const std::string& path, const std::string& text) {
  if (program_ == nullptr) {
    return Status::Error(ErrorKind::kInvalidInput,
                         path + ": an inventory script, which this loader cannot run");
  }
  Status trusted = CheckScriptTrusted(path);
  if (!trusted.ok()) return trusted;
  // exec looks a name without "/" up in PATH; Ansible runs the file itself.
  const std::string exe = path.find('/') == std::string::npos ? "./" + path : path;
  Status script = ReadProgramOutput({exe, "--list"}, path + " --list", true);
  if (script.ok()) return script;
  // As Ansible: a file the script plugin fails on goes to the yaml and ini
  // plugins; the script's error is the one reported if they fail too.
  RawInventory attempt = raw_;
  std::vector<std::string> warnings;
  if (ParseStaticFile(text, path, &attempt, &warnings).ok()) {
    raw_ = std::move(attempt);
    warnings_->insert(warnings_->end(), warnings.begin(), warnings.end());
    warnings_->push_back(path + ": not read as an inventory script (" + script.message() +
                         "); read as a static inventory, as Ansible does");
    return Status::Ok();
  }
  return script;
}

Status SourceReader::ReadPluginFile(const std::string& path, const std::string& plugin) {
  if (program_ == nullptr || !program_->Available("ansible-inventory")) {
    return Status::Error(
        ErrorKind::kInvalidInput,
        path + ":1:1: an inventory plugin's configuration (plugin: " + plugin +
            "), which fleetreap reads through ansible-inventory, not installed here: install "
            "ansible-core (apt install ansible-core), or give fleetreap what `ansible-inventory "
            "-i " +
            path + " --list` prints elsewhere");
  }
  return ReadProgramOutput({"ansible-inventory", "-i", path, "--list"},
                           "ansible-inventory -i " + path + " --list", false);
}

}  // namespace

Status ParseHostListInto(const std::string& list, RawInventory* raw,
                         std::vector<std::string>* warnings) {
  const int ungrouped = raw->GroupId("ungrouped", list, warnings);
  size_t begin = 0;
  while (begin <= list.size()) {
    size_t comma = list.find(',', begin);
    if (comma == std::string::npos) comma = list.size();
    std::string item = list.substr(begin, comma - begin);
    begin = comma + 1;
    item.erase(0, item.find_first_not_of(" \t\r\n"));
    item.erase(item.find_last_not_of(" \t\r\n") + 1);
    if (item.empty()) continue;
    std::string host;
    int port = -1;
    if (item.find('[') != std::string::npos && item.find(']') != std::string::npos &&
        item.front() != '[') {
      return Status::Error(ErrorKind::kInvalidInput,
                           "host list \"" + list + "\": \"" + item +
                               "\" is not a host name (Ansible's host list does not expand "
                               "ranges; use --nodes 'gpu[01-08]')");
    }
    if (!ParseAnsibleAddress(item, &host, &port)) {
      host = item;
      port = -1;
    }
    std::string problem = CheckHostName(host);
    if (!problem.empty()) {
      return Status::Error(ErrorKind::kInvalidInput, "host list \"" + list + "\": " + problem);
    }
    if (raw->host_ids.count(host)) continue;
    raw->AddHost(host, "host list \"" + list + "\"", ungrouped, port, "host list \"" + list + "\"");
  }
  return Status::Ok();
}

Status ParseSingleSource(const std::string& text, const std::string& path, bool yaml,
                         Inventory* inventory, std::vector<std::string>* warnings,
                         std::vector<std::string>* notes) {
  inventory->set_path(path);
  RawInventory raw;
  raw.path = path;
  raw.base_dir = DirectoryOf(path);
  Status s =
      yaml ? ParseYamlInto(text, path, &raw, warnings) : ParseIniInto(text, path, &raw, warnings);
  if (!s.ok()) return s;
  s = LoadGroupAndHostVars(DirectoryOf(path), &raw, warnings);
  if (!s.ok()) return s;
  if (notes) notes->insert(notes->end(), raw.notes.begin(), raw.notes.end());
  return ResolveInventory(&raw, inventory, warnings);
}

}  // namespace inventory_internal

Status LoadInventorySources(const std::vector<std::string>& sources, InventoryProgram* program,
                            Inventory* inventory, std::vector<std::string>* warnings,
                            std::vector<std::string>* notes) {
  using inventory_internal::RawInventory;
  RawInventory raw;
  for (const std::string& source : sources) raw.path += (raw.path.empty() ? "" : ", ") + source;
  inventory->set_path(raw.path);
  if (sources.empty()) return Status::Error(ErrorKind::kUsage, "no inventory source");
  inventory_internal::SourceReader reader(program, &raw, warnings);
  std::vector<std::string> vars_dirs;
  for (const std::string& source : sources) {
    if (source.empty()) return Status::Error(ErrorKind::kUsage, "--hosts: empty inventory source");
    std::string dir;
    bool has_vars = false;
    Status s = reader.ReadSource(source, &dir, &has_vars);
    if (!s.ok()) return s;
    if (has_vars) vars_dirs.push_back(dir);
  }
  for (const std::string& dir : vars_dirs) {
    Status s = inventory_internal::LoadGroupAndHostVars(dir, &raw, warnings);
    if (!s.ok()) return s;
  }
  if (notes) notes->insert(notes->end(), raw.notes.begin(), raw.notes.end());
  return inventory_internal::ResolveInventory(&raw, inventory, warnings);
}

Status LoadInventory(const std::string& path, Inventory* inventory,
                     std::vector<std::string>* warnings, std::vector<std::string>* notes) {
  return LoadInventorySources({path}, nullptr, inventory, warnings, notes);
}

}  // namespace fleetreap
