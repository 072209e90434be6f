// ReportFiles: writes the reports a run asked for (--json, --junit,
// --summary-md, --failed-hosts, --drain-reasons, --metrics, --html) to their
// files; one table of outputs (ReportOutputs: flag, path, mode, renderer)
// serves the path checks, HumanStream and the writer (report_stream.cc). The
// renderers stay pure; this and the spills (host_spill.h) are the only
// report code that touches the file system. Files are written to
// a temporary file that mkstemp creates exclusively next to the target (a
// symlink or file another user planted there is never followed or reused)
// and renamed over it, so a reader never sees half a report.
// Thread-compatible; call once, after the run.
#pragma once

#include <cstddef>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

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
  std::string metrics;  // --metrics: Prometheus text (report_metrics.h)
  std::string html;     // --html: one self-contained page (report_html.h)
  /// --journal (journal.h): written while the run happens, not by
  /// WriteReports; CheckOutputPaths checks it with the others.
  std::string journal;
};

/// Checks, before any host is touched, that every file "files" names (not
/// "-") can be written: no two outputs share a path, none is a directory,
/// and a file can be created in its directory (a temporary one is created
/// there and removed at once). Returns kUsage with one line naming the flag:
///   --json /nonexistent/dir/r.json: cannot write there: No such file or directory
///   --junit out: is a directory
///   --junit r.xml and --json r.xml name the same file
Status CheckOutputPaths(const ReportFiles& files);

/// Writes "content" to "path". "-" means "stdout" (the stream given, so
/// tests can pass their own). The file is written as ".NAME.XXXXXX" beside
/// it (created with O_EXCL, mode 0600: reports name processes and command
/// lines), synced, then renamed
/// over "path"; a symlink at "path" is replaced, not followed. On failure
/// returns kInternal with a message
/// naming the path and the system error, e.g.
///   cannot write /nope/r.json: No such file or directory
/// and leaves any existing file at "path" untouched.
Status WriteReportFile(const std::string& path, const std::string& content,
                       std::FILE* stdout_stream = stdout);

class ReportStream;

/// Takes one piece of a report being written; a ReportRenderer calls it with
/// each piece in order.
using ReportPieceSink = std::function<void(const std::string& piece)>;
using ReportRenderer = std::function<void(const ReportPieceSink& emit)>;

/// WriteReportFile for a report rendered in pieces (RenderJsonPieces): each
/// piece is written as it comes (in writes of about 64 KiB), so the whole
/// text is never held. The same temporary file, rename and errors. "mode" is
/// the file's mode: kPrivateReportMode (0600) for reports that name processes
/// and command lines, kPublicReportMode (0644) for --metrics, which holds host
/// names and counts only and is read by node_exporter as its own user.
constexpr unsigned kPrivateReportMode = 0600;
constexpr unsigned kPublicReportMode = 0644;
Status WriteReportPieces(const std::string& path, const ReportRenderer& render,
                         std::FILE* stdout_stream = stdout, unsigned mode = kPrivateReportMode);

/// One output a run can ask for: its flag, where ReportFiles keeps its path,
/// its file's mode, what a streamed run spills of each host for it (null:
/// nothing, it is made from the folds alone), and its renderer, which hands
/// the report to "emit" in pieces from "stream"'s folds and output "row"'s
/// spill (null: not written by WriteReports, as --journal).
struct ReportOutput {
  const char* flag;
  std::string ReportFiles::*path;
  unsigned mode;
  std::string (*piece)(const HostReport& host, const ReportStream& stream);
  void (*render)(ReportStream& stream, const RunReport& header, size_t row,
                 const ReportPieceSink& emit);
};

/// Every output, in the order WriteReports writes them, --journal last
/// (report_stream.cc).
const std::vector<ReportOutput>& ReportOutputs();

/// Renders and writes every report that "files" names, by the streamed path:
/// "report"'s hosts are fed to a ReportStream (ReportStream::OfWhole,
/// report_stream.h), whose WriteReports writes them (the JSON, JUnit and
/// HTML documents host by host, WriteReportPieces). Every file is 0600
/// except --metrics, 0644 (a textfile collector runs as another user).
/// Keeps going after a failure, so one bad path does not cost the other
/// reports, and returns the first error. At most one of them may be "-"
/// (cli.cc checks). Defined in report_stream.cc.
Status WriteReports(const RunReport& report, const ReportFiles& files,
                    std::FILE* stdout_stream = stdout);

/// Where human output goes: stderr when some report is written to stdout
/// ("-"), so machine output is never mixed with it; stdout otherwise.
std::FILE* HumanStream(const ReportFiles& files);

/// Everything the end of a run prints and writes (the streamed FinishRun of
/// ReportStream::OfWhole(report), report_stream.cc): WriteReports, then a dry
/// run's plan (RenderPlan), the folded table and the verdict on HumanStream (also with --quiet,
/// which only silences progress and logs; colour as ShouldUseColor decides for that stream and
/// "color", --color's "auto", "always" or "never"). Returns ExitCodeFor(report), or kExitSoftware
/// (70, internal error) when a requested report could not be written, after saying why on stderr,
/// below the verdict ("fleetreap: cannot write ...; exit 70 instead of 0").
/// The table wraps at the stream's width (kDefaultTableWidth off a
/// terminal) and lists clean hosts only with "verbose" (-v).
int FinishRun(const RunReport& report, const ReportFiles& files, const std::string& color,
              bool verbose = false);

}  // namespace fleetreap
