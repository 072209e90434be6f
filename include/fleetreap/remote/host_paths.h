// HostPaths: where a host keeps what the remote scripts read (the scan,
// signal and /dev/shm steps' scripts take one). Plain data.
#pragma once

#include <string>

namespace fleetreap {

/// Where a host keeps what the scripts read; tests point these at stand-ins.
struct HostPaths {
  std::string dev_dir = "/dev";  // plain files "<dev_dir>/nvidia*" count by path
  std::string driver_dir = "/proc/driver/nvidia/gpus";  // <bus id>/information
  std::string shm_dir = "/dev/shm";
  std::string kmsg = "/dev/kmsg";  // the kernel log, for the Xid lines
};

}  // namespace fleetreap
