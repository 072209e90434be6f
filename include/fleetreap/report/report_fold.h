// ReportFold: what the end-of-run reports need of the finished hosts,
// folded one host at a time as each ends, so that a run need not hold every
// HostReport until it is over: the counts (by status, by outcome, changed),
// the table's rows (OutcomeFold: kind, folded detail, names), the lines
// under the rows of the hosts that have any (GPU attention lines, /dev/shm
// entries kept, notes, reasons), each step's times for -v, a dry run's
// plan (PlanFold), and the whole
// reports of the hosts whose status is not clean (the Markdown's "Needs
// attention", --failed-hosts and --drain-reasons list them). A clean host
// costs its name, its row's counts and its step times. Thread-compatible.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "fleetreap/report/cause_fold.h"
#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/outcome_fold.h"
#include "fleetreap/report/report.h"
#include "fleetreap/report/report_plan.h"
#include "fleetreap/report/step_times.h"

namespace fleetreap {

/// What the table prints under a row for one host (RowDetailLines), and its
/// reasons (GenericReason, HostReason). Kept only when not all empty.
struct HostRowNotes {
  std::vector<std::string> lines;
  std::string generic_reason;
  std::string reason;
};

class ReportFold {
 public:
  /// "dry_run": the run's (a host's outcome depends on it).
  explicit ReportFold(bool dry_run);

  /// The hosts of "report" folded in report order, as a renderer of a whole
  /// report uses them.
  static ReportFold Of(const RunReport& report);

  /// Folds in "host" at place "index" of the report (inventory order; each
  /// index at most once, in any order).
  void Add(size_t index, const HostReport& host);

  bool dry_run() const { return dry_run_; }
  /// Hosts folded in.
  size_t hosts() const { return hosts_; }
  int Count(HostStatus status) const { return by_status_[static_cast<int>(status)]; }
  int Count(OutcomeKind kind) const { return by_outcome_[static_cast<int>(kind)]; }
  /// Hosts HostChanged says fleetreap changed.
  int changed() const { return changed_; }

  /// GroupOutcomes of the folded hosts and "header"'s hosts without a result
  /// (its not_started, no_report and stopped; its hosts are not read).
  std::vector<OutcomeGroup> Groups(const RunReport& header) const;
  /// The notes of host "name", or null when it has none.
  const HostRowNotes* NotesOf(const std::string& name) const;
  /// The folded hosts grouped by why their GPUs were held.
  const CauseFold& causes() const { return causes_; }
  /// Where the folded hosts' time went (RenderStepTimes).
  const StepTimesFold& step_times() const { return step_times_; }
  /// A dry run's plan of the folded hosts (RenderPlan); "" otherwise.
  std::string RenderPlan(bool verbose = false, int width = 0) const {
    return dry_run_ ? plan_.Render(verbose, width) : "";
  }

  /// "header" with its hosts replaced by the folded hosts whose status is
  /// not clean, whole, in index order: enough for RenderFailedHosts and
  /// RenderDrainReasons, and for the Markdown's attention rows.
  RunReport WithHostsNotClean(const RunReport& header) const;

 private:
  bool dry_run_;
  size_t hosts_ = 0;
  int by_status_[5] = {0, 0, 0, 0, 0};
  int by_outcome_[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  int changed_ = 0;
  OutcomeFold outcomes_;
  std::map<std::string, HostRowNotes> notes_;
  std::map<size_t, HostReport> not_clean_;
  StepTimesFold step_times_;
  CauseFold causes_;
  PlanFold plan_;  // dry runs only
};

/// A fold ("Fold": ReportFold, MetricsFold, HtmlFold, ...: constructed from
/// the run's dry_run, with Add(index, host)) of "report"'s hosts, in report
/// order, as a renderer of a whole report uses it.
template <typename Fold>
Fold FoldOfHosts(const RunReport& report) {
  Fold fold(report.dry_run);
  for (size_t i = 0; i < report.hosts.size(); ++i) fold.Add(i, report.hosts[i]);
  return fold;
}

/// ExitCodeFor (report.h) of a run whose hosts are folded in "fold":
/// "header"'s dry run, not_started, no_report and stopped, not its hosts.
int ExitCodeFor(const RunReport& header, const ReportFold& fold);

}  // namespace fleetreap
