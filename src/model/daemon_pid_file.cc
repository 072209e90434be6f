#include "fleetreap/model/daemon_pid_file.h"

namespace fleetreap {

const std::vector<DaemonPidFile>& DaemonPidFiles() {
  static const std::vector<DaemonPidFile> files = {
      {"nvidia-persistenced", "/var/run/nvidia-persistenced/nvidia-persistenced.pid"},
      {"nv-fabricmanager", "/var/run/nvidia-fabricmanager/nv-fabricmanager.pid"},
      {"nvlsm", "/var/run/nvidia-fabricmanager/nvlsm.pid"},
      {"nvlsm", "/var/run/nvlsm.pid"},  // where nvlsm is started on its own
      {"nvlsm", "/var/run/nvidia-nvlsm/nvlsm.pid"},
      {"nvidia-gridd", "/var/run/nvidia-gridd/nvidia-gridd.pid"},
      {"nvidia-topologyd", "/var/run/nvidia-topologyd/nvidia-topologyd.pid"},
      {"nv-hostengine", "/var/run/nvhostengine.pid"},  // DCGM's --pid default
  };
  return files;
}

}  // namespace fleetreap
