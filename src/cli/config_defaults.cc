#include "fleetreap/cli/config_defaults.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

// What a key is when nothing sets it, as --show-config says it.
const std::map<std::string, std::string>& BuiltInDefaults() {
  static const std::map<std::string, std::string> defaults = {
      {"hosts", "-"},
      {"forks", "64"},
      {"connect-timeout", "10s"},
      {"command-timeout", "60s"},
      {"host-timeout", "0 (none)"},
      {"deadline", "0 (none)"},
      {"retries", "2"},
      {"user", "- (the local user)"},
      {"identity", "- (ssh-agent and the default keys)"},
      {"known-hosts", "~/.ssh/known_hosts"},
      {"host-key-policy", "strict"},
      {"no-agent", "false"},
      {"ssh-config", "false"},
      {"ssh-config-file", "~/.ssh/config"},
      {"become", "false"},
      {"playbook", "- (the built-in default)"},
      {"protect", "- (only the built-in list)"},
      {"log-dir", "-"},
      {"color", "auto"},
  };
  return defaults;
}

// The first Setting of each key: the one that counts.
std::map<std::string, const Setting*> Effective(const std::vector<Setting>& defaults) {
  std::map<std::string, const Setting*> first;
  for (const Setting& s : defaults) first.emplace(s.key, &s);
  return first;
}

std::vector<std::string> FlagsFor(const Setting& setting) {
  if (IsSwitchKey(setting.key)) {
    if (setting.values.empty() || setting.values[0] != "true") return {};
    return {"--" + setting.key};
  }
  std::vector<std::string> flags;
  for (const std::string& value : setting.values) flags.push_back("--" + setting.key + "=" + value);
  return flags;
}

// Whether "error" is about "flag" itself, not a longer flag it begins.
bool NamesFlag(const std::string& error, const std::string& flag) {
  for (size_t at = error.find(flag); at != std::string::npos; at = error.find(flag, at + 1)) {
    const size_t end = at + flag.size();
    if (end == error.size()) return true;
    const char next = error[end];
    if (!std::isalnum(static_cast<unsigned char>(next)) && next != '-') return true;
  }
  return false;
}

}  // namespace

CliResult ParseCommandLineWithDefaults(int argc, const char* const* argv,
                                       const std::vector<Setting>& defaults) {
  if (argc > 1 && std::string(argv[1]) == "merge") return ParseCommandLine(argc, argv);
  // A sweep takes the run's defaults under its own flags (cli_sweep.cc).
  if (argc > 1 && std::string(argv[1]) == "sweep") {
    return ParseSweepCommandLine(argc - 1, argv + 1, defaults);
  }
  const auto given = GivenFlags(argc, argv);
  std::vector<std::string> args(argv, argv + argc);
  std::vector<const Setting*> used;
  for (const auto& [key, setting] : Effective(defaults)) {
    if (given.count(key)) continue;
    // --local takes no inventory: a default inventory must not get in its way.
    if ((key == "hosts") && (given.count("local") || given.count("nodes"))) continue;
    std::vector<std::string> flags = FlagsFor(*setting);
    if (flags.empty()) continue;
    args.insert(args.end(), flags.begin(), flags.end());
    used.push_back(setting);
  }
  std::vector<const char*> pointers;
  for (const std::string& arg : args) pointers.push_back(arg.c_str());
  CliResult result = ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
  if (result.action == CliAction::kUsageError) {
    for (const Setting* setting : used) {
      if (NamesFlag(result.error, "--" + setting->key)) {
        result.error += " (from " + setting->source + ")";
        break;
      }
    }
  }
  return result;
}

std::string FormatShowConfig(int argc, const char* const* argv,
                             const std::vector<Setting>& defaults) {
  const auto given = GivenFlags(argc, argv);
  const auto effective = Effective(defaults);
  std::vector<std::vector<std::string>> rows = {{"SETTING", "VALUE", "FROM"}};
  for (const std::string& key : ConfigKeys()) {
    auto flag = given.find(key);
    auto setting = effective.find(key);
    if (flag != given.end()) {
      rows.push_back(
          {key, flag->second.empty() ? "true" : Join(flag->second, ", "), "command line"});
    } else if (setting != effective.end()) {
      rows.push_back({key, Join(setting->second->values, ", "), setting->second->source});
    } else {
      rows.push_back({key, BuiltInDefaults().at(key), "default"});
    }
  }
  size_t width[2] = {0, 0};
  for (const auto& row : rows) {
    for (size_t c = 0; c < 2; ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::ostringstream out;
  for (const auto& row : rows) {
    out << row[0] << std::string(width[0] - row[0].size() + 2, ' ') << row[1]
        << std::string(width[1] - row[1].size() + 2, ' ') << row[2] << "\n";
  }
  return out.str();
}

}  // namespace fleetreap
