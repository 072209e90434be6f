// ReportTable: the human end-of-run report. Hosts with the same outcome are
// gathered on one row and their names folded ClusterShell style
// ("gpu[01-60]  clean  8/8 GPUs 0 MiB"), problems listed last, then a one-line
// verdict. Pure functions of the report; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/time_format.h"  // FormatSeconds, for the human reports
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report.h"
#include "fleetreap/report/report_fold.h"

namespace fleetreap {

struct TableStyle {
  /// ANSI colours on the status words and the verdict. Decide it with
  /// ShouldUseColor (terminal.h); never set it for files or pipes.
  bool color = false;
  /// Columns to wrap host sets at (TerminalWidth); 0: kDefaultTableWidth.
  int width = 0;
  /// -v: clean hosts are listed too, not only counted.
  bool verbose = false;
  /// The verdict ends "(exit N)"; off where the process exits otherwise
  /// (a sweep round's line: the sweep itself exits 0).
  bool exit_code = true;
};

/// The width tables wrap at off a terminal (CI logs, files).
inline constexpr int kDefaultTableWidth = 100;

/// One row per reason (GroupOutcomes, host_outcome.h: counts and GPU lists
/// folded into the row), problems first, then the verdict line. A row's
/// hosts are folded with FoldHostNames into its first column; a set too wide
/// for the column (a third of the width) is replaced there by "N hosts" and
/// listed under the row, indented and wrapped at style.width, except for
/// clean hosts, which are only counted unless style.verbose. Under a row,
/// indented, the GpuAttentionLines of its hosts (prefixed "HOST: " when the
/// row gathers several), then the reasons of its hosts (HostReason, shared
/// where they differ only by host). The verdict is one line off a terminal
/// (style.width 0: what a CI job greps) and breaks after its commas to fit
/// a terminal's width. Every line ends with '\n'. A run with no hosts
/// renders only the verdict.
std::string RenderTable(const RunReport& report, const TableStyle& style);

/// RenderTable of a run whose hosts were folded into "fold" as they ended
/// (the same text, byte for byte): "report" gives the run's flags, times
/// and hosts without a result; its hosts are not read.
std::string RenderTable(const RunReport& report, const ReportFold& fold, const TableStyle& style);

/// The lines the table prints under a row for "host": its
/// GpuAttentionLines, then "/dev/shm kept NAME: why" per entry left in
/// place and "note: TEXT" per note (control bytes escaped).
std::vector<std::string> RowDetailLines(const HostReport& host);

/// One line per GPU of "host" (its last readings) that no cleaning can fix
/// and a person must act on, in the words of nvidia-smi or the driver:
/// "GPU 0000:B1:00.0 lost: Unable to determine the device handle for
/// GPU0000:B1:00.0: Unknown Error" (a lost GPU nvidia-smi could not number
/// is named by its bus id, see GpuLabel) and "GPU 3 needs recovery: driver
/// asks for recovery: Reset (0 MiB used)". Control characters come escaped
/// ("\x1b"), each line is capped; no '\n'.
std::vector<std::string> GpuAttentionLines(const HostReport& host);

/// The one-line verdict, without '\n':
/// "READY: 64/64 hosts clean (3 cleaned) in 12.3 s (exit 0)",
/// "NOT READY: 60/64 hosts clean, 1 dirty, 2 unreachable, 1 failed in 12.3 s (exit 3)",
/// "DRY RUN: ..." for dry runs, "INTERRUPTED: ..." when Ctrl-C cut it short.
std::string RenderVerdict(const RunReport& report, const TableStyle& style);
/// RenderVerdict of a folded run ("report" as for RenderTable).
std::string RenderVerdict(const RunReport& report, const ReportFold& fold, const TableStyle& style);

/// The ANSI colour that marks "kind" on a terminal: green for clean and
/// cleaned, cyan for would clean, yellow for dirty, red for failed and
/// unreachable, magenta for not started.
const char* OutcomeColor(OutcomeKind kind);

}  // namespace fleetreap
