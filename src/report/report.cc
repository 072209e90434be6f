#include "fleetreap/report/report.h"

#include "fleetreap/base/exit_code.h"

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
  int code = kExitClean;
  for (const HostReport& host : report.hosts) {
    switch (host.status) {
      case HostStatus::kClean: break;
      case HostStatus::kDirty:
        if (!report.dry_run) code |= kExitDirty;
        break;
      case HostStatus::kUnreachable:
      case HostStatus::kFailed: code |= kExitUnreachable; break;
    }
  }
  // Hosts never started were selected and are not known to be clean.
  if (!report.not_started.empty()) code |= kExitUnreachable;
  return code;
}

}  // namespace fleetreap
