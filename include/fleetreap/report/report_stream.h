// ReportStream: the end-of-run reports made as the hosts end, so that a run
// holds the hosts in flight and counts, not every HostReport. Each finished
// host is folded into a ReportFold (the table, the counts, the Markdown
// summary, --failed-hosts, --drain-reasons), into a MetricsFold when
// --metrics is asked for and an HtmlFold when --html is, and each output
// that has per-host pieces (--json's host objects, --junit's <testcase>s,
// --html's <details>) gets them spilled (HostSpill) beside its target; at
// the end each output (ReportOutputs, report_files.h) is put together from
// the folds and its spill, byte for byte what RenderJson, RenderJunit,
// RenderMetrics, RenderHtml, ... give for the whole report. A whole report
// is written by the same path (WriteReports feeds a stream every host).
// Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/report/host_spill.h"
#include "fleetreap/report/html_fold.h"
#include "fleetreap/report/report.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_fold.h"
#include "fleetreap/report/report_metrics.h"

namespace fleetreap {

class ReportStream {
 public:
  /// A stream for a run of "hosts" selected hosts writing "files", of
  /// playbook "playbook" ("" for the default), a dry run when "dry_run".
  /// Fails (kInternal) when a spill cannot be created.
  static Status Open(const ReportFiles& files, const std::string& playbook, bool dry_run,
                     size_t hosts, std::unique_ptr<ReportStream>* out);

  /// A stream of the whole report "report" (which must outlive it), every
  /// host folded in: it spills nothing, its host pieces are rendered from
  /// "report" as they are written. WriteReports and FinishRun of a whole
  /// report (report_files.h) write by it.
  static ReportStream OfWhole(const RunReport& report, const ReportFiles& files);

  /// Folds in and spills host "index" (its place in inventory order).
  void Add(size_t index, const HostReport& host);

  const ReportFold& fold() const { return fold_; }
  /// The run's playbook, as Open had it.
  const std::string& playbook() const { return playbook_; }
  /// The metrics' fold; only when --metrics was asked for.
  const MetricsFold& metrics() const { return *metrics_; }
  /// The page's fold; only when --html was asked for.
  const HtmlFold& html() const { return *html_; }
  /// Hands the host pieces of output "row" (its place in ReportOutputs) to
  /// "emit" in report order, from its spill (or OfWhole's report); nothing
  /// when the row has no pieces.
  void ForEachPiece(size_t row, const ReportPieceSink& emit);

  /// Writes every report "files" (those Open had) names, in ReportOutputs'
  /// order, each from
  /// the folds and its spill. Keeps going after a failure, so one bad path
  /// does not cost the other reports, and returns the first error; a
  /// spill's write or read error is that report's error. "header" gives the
  /// run's fields and hosts without a result; its hosts are not read.
  Status WriteReports(const RunReport& header, const ReportFiles& files,
                      std::FILE* stdout_stream = stdout);

 private:
  ReportStream(const ReportFiles& files, const std::string& playbook, bool dry_run);

  ReportFold fold_;
  std::string playbook_;
  std::unique_ptr<MetricsFold> metrics_;            // --metrics only
  std::unique_ptr<HtmlFold> html_;                  // --html only
  std::vector<std::unique_ptr<HostSpill>> spills_;  // by ReportOutputs row; null: none
  const RunReport* whole_ = nullptr;                // OfWhole's report: the pieces' source
};

/// FinishRun (report_files.h) of a streamed run: the reports written by
/// "stream", the table and verdict from its fold; "report" as for
/// ReportStream::WriteReports.
int FinishRun(const RunReport& report, ReportStream* stream, const ReportFiles& files,
              const std::string& color, bool verbose = false);

}  // namespace fleetreap
