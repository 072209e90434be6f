// ReportStream: the end-of-run reports made as the hosts end, so that a run
// holds the hosts in flight and counts, not every HostReport. Each finished
// host is folded into a ReportFold (the table, the counts, the Markdown
// summary, --failed-hosts, --drain-reasons) and, when --json or --junit is
// asked for, its JSON object and its <testcase> are spilled (HostSpill)
// beside the target; at the end the documents are put together from the
// fold and the spills, byte for byte what RenderJson and RenderJunit give
// for the whole report. --metrics and --html are still made from whole
// reports: NeedsWholeReports says when the run must keep them.
// Thread-compatible.
#pragma once

#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>

#include "fleetreap/base/status.h"
#include "fleetreap/report/host_spill.h"
#include "fleetreap/report/report.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_fold.h"

namespace fleetreap {

class ReportStream {
 public:
  /// A stream for a run of "hosts" selected hosts writing "files", of
  /// playbook "playbook" ("" for the default), a dry run when "dry_run".
  /// Fails (kInternal) when a spill cannot be created.
  static Status Open(const ReportFiles& files, const std::string& playbook, bool dry_run,
                     size_t hosts, std::unique_ptr<ReportStream>* out);

  /// True when "files" asks for a report still made from whole HostReports
  /// (--metrics, --html): the run must then keep its hosts' reports.
  static bool NeedsWholeReports(const ReportFiles& files);

  /// Folds in and spills host "index" (its place in inventory order).
  void Add(size_t index, const HostReport& host);

  const ReportFold& fold() const { return fold_; }

  /// Writes every report "files" names (WriteReports' order, rules and
  /// errors): --json and --junit from the spills, the Markdown, failed hosts
  /// and drain reasons from the fold, --metrics and --html from "header"'s
  /// hosts, which must then be whole (NeedsWholeReports). "header" gives the
  /// run's fields and hosts without a result. A spill's write or read error
  /// is that report's error.
  Status WriteReports(const RunReport& header, const ReportFiles& files,
                      std::FILE* stdout_stream = stdout);

 private:
  explicit ReportStream(bool dry_run) : fold_(dry_run) {}

  ReportFold fold_;
  std::string playbook_;
  std::unique_ptr<HostSpill> json_;
  std::unique_ptr<HostSpill> junit_;
};

/// FinishRun (report_files.h) of a streamed run: the reports written by
/// "stream", the table and verdict from its fold; "report" as for
/// ReportStream::WriteReports.
int FinishRun(const RunReport& report, ReportStream* stream, const ReportFiles& files,
              const std::string& color, bool verbose = false);

}  // namespace fleetreap
