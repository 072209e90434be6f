#include "fleetreap/escalation/unit_properties.h"

#include <fnmatch.h>

namespace fleetreap {

namespace {

bool Glob(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

// (pattern, reason): systemd's own units, the way in, and the units of the
// protected daemons (docs/protected-daemons.md).
const std::vector<std::pair<std::string, std::string>>& Rules() {
  static const std::vector<std::pair<std::string, std::string>> rules = {
      {"ssh.service", "sshd's unit"},
      {"sshd.service", "sshd's unit"},
      {"ssh@*.service", "sshd's unit"},
      {"sshd@*.service", "sshd's unit"},
      {"ssh.socket", "sshd's unit"},
      {"systemd-*", "systemd's own unit"},
      {"dbus.service", "systemd's own unit"},
      {"dbus-broker.service", "systemd's own unit"},
      {"user@*.service", "systemd's own unit"},
      {"*.scope", "a session or container scope"},
      {"*.slice", "a slice"},
      {"*.target", "a target"},
      {"*.mount", "a mount"},
      {"*.socket", "a socket"},
      {"*.device", "a device"},
      {"nvidia-persistenced.service", "a protected daemon's unit (nvidia-persistenced)"},
      {"nvidia-fabricmanager.service", "a protected daemon's unit (nv-fabricmanager)"},
      {"nvidia-fabric-manager.service", "a protected daemon's unit (nv-fabricmanager)"},
      {"nvidia-dcgm.service", "a protected daemon's unit (nv-hostengine)"},
      {"dcgm.service", "a protected daemon's unit (nv-hostengine)"},
      {"dcgm-exporter.service", "a protected daemon's unit (dcgm-exporter)"},
      {"nvidia-imex.service", "a protected daemon's unit (nvidia-imex)"},
      {"nvidia-gridd.service", "a protected daemon's unit (nvidia-gridd)"},
      {"nvidia-topologyd.service", "a protected daemon's unit (nvidia-topologyd)"},
      {"nvidia-powerd.service", "a protected daemon's unit (nvidia-powerd)"},
      {"nvidia-mps.service", "a protected daemon's unit (nvidia-cuda-mps-control)"},
      {"nvsm*.service", "a protected daemon's unit (nvsm)"},
      {"nv_peer_mem.service", "a protected daemon's unit (nv_peer_mem)"},
      {"kubelet.service", "the node agent (kubelet)"},
      {"containerd.service", "the container runtime"},
      {"docker.service", "the container runtime"},
      {"crio.service", "the container runtime"},
      {"slurmd.service", "the scheduler's node daemon (slurmd)"},
  };
  return rules;
}

}  // namespace

std::string ProtectedUnitReason(const std::string& unit) {
  for (const auto& [pattern, reason] : Rules()) {
    if (Glob(pattern, unit)) return reason;
  }
  return "";
}

const std::vector<std::string>& ProtectedUnitNames() {
  static const std::vector<std::string> names = {"ssh.service",
                                                 "sshd.service",
                                                 "ssh.socket",
                                                 "systemd-journald.service",
                                                 "systemd-logind.service",
                                                 "systemd-udevd.service",
                                                 "dbus.service",
                                                 "user@0.service",
                                                 "init.scope",
                                                 "session-1.scope",
                                                 "system.slice",
                                                 "user.slice",
                                                 "multi-user.target",
                                                 "nvidia-persistenced.service",
                                                 "nvidia-fabricmanager.service",
                                                 "nvidia-dcgm.service",
                                                 "dcgm.service",
                                                 "dcgm-exporter.service",
                                                 "nvidia-imex.service",
                                                 "nvidia-gridd.service",
                                                 "nvidia-topologyd.service",
                                                 "nvidia-powerd.service",
                                                 "nvsm.service",
                                                 "nvsm-core.service",
                                                 "nv_peer_mem.service",
                                                 "kubelet.service",
                                                 "containerd.service",
                                                 "docker.service",
                                                 "slurmd.service"};
  return names;
}

}  // namespace fleetreap
