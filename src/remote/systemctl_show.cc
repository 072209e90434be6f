#include "fleetreap/remote/systemctl_show.h"

#include "fleetreap/base/text.h"

namespace fleetreap {

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

}  // namespace fleetreap
