#include "fleetreap/report/report.h"

#include "fleetreap/base/exit_code.h"

namespace fleetreap {

std::vector<HostWithoutResult> HostsWithoutResult(const RunReport& report) {
  std::vector<HostWithoutResult> out;
  for (const std::string& name : report.not_started) {
    out.push_back({name, true, report.stopped.empty() ? "interrupted" : report.stopped});
  }
  for (const MissingReport& missing : report.no_report) {
    out.push_back({missing.name, false, missing.why});
  }
  return out;
}

int ExitCodeFor(const RunReport& report) {
  int code = kExitClean;
  for (const HostReport& host : report.hosts) {
    switch (host.status) {
      case HostStatus::kClean: break;
      case HostStatus::kDirty:
      case HostStatus::kNotReady:
        if (!report.dry_run) code |= kExitDirty;
        break;
      case HostStatus::kUnreachable:
      case HostStatus::kFailed: code |= kExitUnreachable; break;
    }
  }
  // Hosts never started were selected and are not known to be clean.
  if (!report.not_started.empty() || !report.no_report.empty()) code |= kExitUnreachable;
  if (!report.stopped.empty()) code |= kExitStopped;
  return code;
}

}  // namespace fleetreap
