// HtmlFold: what the HTML page (report_html.h) needs of the finished hosts
// beyond ReportFold's counts and rows, folded one host at a time as each
// ends, so that a run need not hold every HostReport: the holder funnel's
// sums, the grid's rows (a row's host names, its first host's GPUs and
// detail), the slowest hosts' step timings, and the time per step. Each
// host's <details> is a piece of its own (RenderHostHtmlPiece), spilled by
// a streamed run. A clean host costs its name and place. Thread-compatible.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

class HtmlFold {
 public:
  /// The holders found, signalled and left (the page's funnel).
  struct Funnel {
    int found = 0;
    int terms = 0;
    int kills = 0;
    int left = 0;
    int exited = 0;
    int gone = 0;
    int spared = 0;
  };
  /// One row of the grid: the hosts of one inventory group with the same
  /// outcome story and GPU states.
  struct Row {
    OutcomeKind kind = OutcomeKind::kClean;
    std::string group;                    // the hosts' first inventory group
    std::map<size_t, std::string> hosts;  // place in the report: name
    std::vector<GpuReading> before;       // the first host's GPUs
    std::vector<GpuReading> after;
    std::string detail;  // the hosts' outcome detail; "" when they differ
    bool details_differ = false;
  };
  /// A host of the slow tail.
  struct TailHost {
    size_t index = 0;
    std::string name;
    std::chrono::milliseconds duration{0};
    std::vector<StepTiming> timings;
  };
  /// The time spent in one step over the hosts.
  struct StepTotal {
    int hosts = 0;
    std::chrono::milliseconds total{0};
    std::chrono::milliseconds longest{0};
  };

  /// "dry_run": the run's (a host's outcome depends on it).
  explicit HtmlFold(bool dry_run);

  /// Folds in "host" at place "index" of the report (each index at most
  /// once, in any order).
  void Add(size_t index, const HostReport& host);

  bool dry_run() const { return dry_run_; }
  /// Hosts folded in.
  size_t hosts() const { return places_.size(); }
  /// Where folded host "index" stands among the folded hosts: its place in
  /// a whole report's hosts, which names its <details> ("h" N).
  size_t Place(size_t index) const;
  const Funnel& funnel() const { return funnel_; }
  /// The grid's rows: problems first (OutcomeRank), then by inventory group
  /// in report order, then by their first host.
  std::vector<const Row*> Rows() const;
  /// The slowest hosts (at most "kSlowestHosts"), slowest first; among
  /// equals, report order.
  const std::vector<TailHost>& slowest() const { return slowest_; }
  /// Each step's total, in the order the steps first appear in report
  /// order, kBetweenSteps last (when any host spent time between steps).
  std::vector<std::pair<std::string, StepTotal>> Steps() const;

  static constexpr size_t kSlowestHosts = 20;

 private:
  void AddRow(size_t index, const HostReport& host, const HostOutcome& outcome);
  void AddTimings(size_t index, const HostReport& host);

  bool dry_run_;
  std::vector<size_t> places_;  // folded indexes, sorted
  Funnel funnel_;
  std::map<std::string, Row> rows_;            // group and row key: row
  std::map<std::string, size_t> group_first_;  // group: its first host's index
  std::vector<TailHost> slowest_;
  std::map<std::string, std::pair<std::pair<size_t, size_t>, StepTotal>> steps_;  // first seen
  StepTotal between_;
};

/// One host's <details> as the page has it, without its place: the piece a
/// streamed run spills, put in the page by RenderHtmlPieces.
std::string RenderHostHtmlPiece(const HostReport& host, bool dry_run);

}  // namespace fleetreap
