// UnitProperties: what `systemctl show -p
// Id,Restart,RestartUSec,KillMode,ControlGroup,MainPID`
// says about one of a host's units. Read by remote (systemctl_show.h), judged
// by the escalation (which units are safe to stop). Plain values;
// thread-compatible.
#pragma once

#include <string>

namespace fleetreap {

struct UnitProperties {
  std::string restart;        // "no", "always", "on-failure"...
  std::string restart_sec;    // RestartUSec as systemd prints it: "5s", "100ms"; "" unknown
  std::string kill_mode;      // "control-group", "mixed", "process", "none"; "" unknown
  std::string control_group;  // "/system.slice/vllm.service"
  int main_pid = 0;
};

}  // namespace fleetreap
