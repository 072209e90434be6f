#include "fleetreap/report/report.h"

#include "fleetreap/report/report_fold.h"

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

// The exit code is decided once, on the folded counts (report_fold.cc).
int ExitCodeFor(const RunReport& report) { return ExitCodeFor(report, ReportFold::Of(report)); }

}  // namespace fleetreap
