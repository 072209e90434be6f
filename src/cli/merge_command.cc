// MergeCommand (commands.h): `fleetreap merge`, the per-node reports
// joined, then finished as a run.
#include <string>
#include <vector>

#include "command_support.h"
#include "fleetreap/cli/commands.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_merge.h"

namespace fleetreap {

int MergeCommand(const Options& options) {
  const ReportFiles files = ReportFilesFor(options);
  Status status = CheckOutputPaths(files);
  if (!status.ok()) return FailUsage(status.message());
  RunReport report;
  std::vector<std::string> expected;
  if (!options.merge_expect.empty()) status = ReadExpectedHosts(options.merge_expect, &expected);
  if (status.ok()) status = MergeReportFiles(options.merge_reports, &report, expected);
  if (status.ok()) ExpectHosts(expected, &report);
  if (!status.ok()) return ExitCodeForLoadError(status);
  return FinishRun(report, files, options.color, options.verbosity > 0);
}

}  // namespace fleetreap
