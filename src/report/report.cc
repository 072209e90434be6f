#include "fleetreap/report/report.h"

namespace fleetreap {

const char* HostStatusName(HostStatus status) {
  switch (status) {
    case HostStatus::kClean: return "clean";
    case HostStatus::kDirty: return "dirty";
    case HostStatus::kUnreachable: return "unreachable";
    case HostStatus::kFailed: return "failed";
  }
  return "failed";
}

int ExitCodeFor(const RunReport& report) {
  int code = 0;
  for (const HostReport& host : report.hosts) {
    switch (host.status) {
      case HostStatus::kClean: break;
      case HostStatus::kDirty:
        if (!report.dry_run) code |= 1;
        break;
      case HostStatus::kUnreachable:
      case HostStatus::kFailed:
        code |= 2;
        break;
    }
  }
  // Hosts never started were selected and are not known to be clean.
  if (!report.not_started.empty()) code |= 2;
  return code;
}

}  // namespace fleetreap
