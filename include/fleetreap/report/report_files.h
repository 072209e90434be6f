// ReportFiles: writes the reports a run asked for (--json, --junit,
// --summary-md, --failed-hosts, --drain-reasons) to their files. The
// renderers stay pure; this is the only report code that touches the file
// system. Files are written to
// a temporary file that mkstemp creates exclusively next to the target (a
// symlink or file another user planted there is never followed or reused)
// and renamed over it, so a reader never sees half a report.
// Thread-compatible; call once, after the run.
#pragma once

#include <cstdio>
#include <string>

#include "fleetreap/base/status.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

/// The report files a run asked for (--json, --junit, --summary-md,
/// --failed-hosts, --drain-reasons): a path, "-" for stdout, or "" for "not
/// asked for".
struct ReportFiles {
  std::string json;
  std::string junit;
  std::string summary_md;
  std::string failed_hosts;
  std::string drain_reasons;
};

/// Writes "content" to "path". "-" means "stdout" (the stream given, so
/// tests can pass their own). The file is written as ".NAME.XXXXXX" beside
/// it (created with O_EXCL, mode 0666 less the umask), synced, then renamed
/// over "path"; a symlink at "path" is replaced, not followed. On failure
/// returns kInternal with a message
/// naming the path and the system error, e.g.
///   cannot write /nope/r.json: No such file or directory
/// and leaves any existing file at "path" untouched.
Status WriteReportFile(const std::string& path, const std::string& content,
                       std::FILE* stdout_stream = stdout);

/// Renders and writes every report that "files" names.
/// Keeps going after a failure, so one bad path does not cost the other
/// reports, and returns the first error. At most one of them may be "-" (cli.cc checks).
Status WriteReports(const RunReport& report, const ReportFiles& files,
                    std::FILE* stdout_stream = stdout);

/// Where human output goes: stderr when some report is written to stdout
/// ("-"), so machine output is never mixed with it; stdout otherwise.
std::FILE* HumanStream(const ReportFiles& files);

/// Everything the end of a run prints and writes: the folded table and the
/// verdict on HumanStream (also with --quiet, which only silences progress
/// and logs; colour as ShouldUseColor decides for that stream and "color",
/// --color's "auto", "always" or "never"), then WriteReports.
/// Returns ExitCodeFor(report), or kExitSoftware (70, internal error) when a
/// requested report could not be written, after saying why on stderr.
int FinishRun(const RunReport& report, const ReportFiles& files, const std::string& color);

}  // namespace fleetreap
