#include "fleetreap/model/host_status.h"

namespace fleetreap {

const char* HostStatusName(HostStatus status) {
  switch (status) {
    case HostStatus::kClean: return "clean";
    case HostStatus::kDirty: return "dirty";
    case HostStatus::kUnreachable: return "unreachable";
    case HostStatus::kFailed: return "failed";
    case HostStatus::kNotReady: return "not_ready";
  }
  return "failed";
}

}  // namespace fleetreap
