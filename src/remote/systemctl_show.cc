#include "fleetreap/remote/systemctl_show.h"

#include <fnmatch.h>
#include <strings.h>

#include <algorithm>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

// list-units' order (systemctl's unit_info_compare): by the type suffix,
// then by the whole name, case ignored.
bool ListedBefore(const std::string& a, const std::string& b) {
  const size_t da = a.rfind('.'), db = b.rfind('.');
  if (da != std::string::npos && db != std::string::npos) {
    const int by_type = strcasecmp(a.c_str() + da, b.c_str() + db);
    if (by_type != 0) return by_type < 0;
  }
  return strcasecmp(a.c_str(), b.c_str()) < 0;
}

bool MatchesAny(const std::vector<std::string>& patterns, const std::string& id) {
  for (const std::string& pattern : patterns) {
    if (fnmatch(pattern.c_str(), id.c_str(), FNM_NOESCAPE) == 0) return true;
  }
  return false;
}

}  // namespace

std::map<std::string, UnitProperties> ParseSystemctlShow(const std::string& text) {
  std::map<std::string, UnitProperties> units;
  std::string id;
  UnitProperties props;
  auto flush = [&]() {
    if (!id.empty()) units[id] = props;
    id.clear();
    props = UnitProperties();
  };
  for (const std::string& line : SplitLines(text)) {
    if (line.empty()) {
      flush();
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string::npos) continue;
    std::string key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "Id") {
      id = value;
    } else if (key == "Restart") {
      props.restart = value;
    } else if (key == "RestartUSec") {
      props.restart_sec = value;
    } else if (key == "KillMode") {
      props.kill_mode = value;
    } else if (key == "ControlGroup") {
      props.control_group = value;
    } else if (key == "MainPID") {
      int pid = 0;
      bool ok = !value.empty() && value.size() < 10;
      for (char c : value) ok = ok && c >= '0' && c <= '9';
      for (char c : value) pid = ok ? pid * 10 + (c - '0') : 0;
      props.main_pid = pid;
    }
  }
  flush();
  return units;
}

std::vector<std::string> ActiveUnitsShown(const std::string& text,
                                          const std::vector<std::string>& patterns) {
  std::vector<std::string> active;
  std::string id, state;
  auto flush = [&]() {
    if (state == "active" && !id.empty() && MatchesAny(patterns, id) &&
        std::find(active.begin(), active.end(), id) == active.end()) {
      active.push_back(id);
    }
    id.clear();
    state.clear();
  };
  for (const std::string& line : SplitLines(text)) {
    if (line.empty()) {
      flush();
    } else if (line.rfind("Id=", 0) == 0) {
      id = line.substr(3);
    } else if (line.rfind("ActiveState=", 0) == 0) {
      state = line.substr(12);
    }
  }
  flush();
  std::stable_sort(active.begin(), active.end(), ListedBefore);
  return active;
}

bool IsPlainUnitName(const std::string& name) {
  return !name.empty() && name.find_first_not_of(
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                              "0123456789:_.@-") == std::string::npos;
}

}  // namespace fleetreap
