// ReportMerge: joins the JSON reports of many runs (one per node, each from
// `fleetreap --local --json`, e.g. under srun or a Slurm epilog) into one
// fleet report, which renders and exits as an SSH run over those hosts
// would (`fleetreap merge`). Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

/// One report and where it came from (a file name, for error messages).
struct SourcedReport {
  std::string source;
  RunReport report;
};

/// Joins "inputs" into "merged", in input order: hosts and not_started
/// are concatenated; interrupted if any was; start_time is the earliest
/// start and duration runs to the latest end; tool version, playbook and
/// host key policy are kept when all agree and joined with ", " (distinct,
/// first seen first) when they do not; the scope keeps each field all
/// reports agree on (source "merged" when the sources differ). A report
/// may itself be a merge. kInvalidInput, naming both sources, when a host
/// name appears twice (or twice in one report: "a.json: host gpu01 appears
/// twice"):
///   b.json: host gpu01 is also in a.json
/// or when dry runs and real runs are mixed:
///   b.json: a dry run cannot be merged with a real run (b.json is a dry run, a.json is not)
/// kUsage when "inputs" is empty.
[[nodiscard]] Status MergeReports(const std::vector<SourcedReport>& inputs, RunReport* merged);

/// The MissingReport::why ExpectHosts gives: "no report among the merged files".
inline constexpr char kNoReportAmongMerged[] = "no report among the merged files";

/// Adds to merged->no_report, in the order of "expected", each name that is
/// not yet a host, a never-started host or a host without a report of
/// "merged", with the why kNoReportAmongMerged: a node whose report never
/// came is not known to be clean (exit bit 2, --failed-hosts), and the table
/// says "no report  no report among the merged files".
void ExpectHosts(const std::vector<std::string>& expected, RunReport* merged);

/// ExpectHosts with the names in file "path", one per line (blank lines and
/// "#" comments skipped; `scontrol show hostnames` output). kInvalidInput
/// "hosts.txt: cannot read: No such file or directory" when unreadable.
[[nodiscard]] Status ExpectHostsFromFile(const std::string& path, RunReport* merged);

/// The names of file "path", ExpectHostsFromFile's format, into "names".
[[nodiscard]] Status ReadExpectedHosts(const std::string& path, std::vector<std::string>* names);

/// The node a report file is named after: its base name without ".json"
/// (or ".json.journal"): "nodes/gpu07.json" is gpu07's; "" for other names.
std::string NodeOfReportFile(const std::string& path);

/// Whether "name" is spelled as a host name is: letters, digits, "-", "."
/// and "_", a letter or digit first, at most 253 characters ("gpu07",
/// "gpu07.rack2"; not "", "-x" or "fleet (2)").
bool IsHostShapedName(const std::string& name);

/// A report file named after a node (NodeOfReportFile) is that node's own
/// report, as the Slurm sweep writes them from each node's own srun output,
/// when the node is expected, or when the report is a --local one (its hosts
/// reached at localhost, no host key policy) and its name is host-shaped
/// (IsHostShapedName) and either it holds one host or it names that node
/// among its hosts (a merged report named after none of its hosts is not a
/// node's). A node's own report must hold exactly one host, that node, so
/// one node cannot speak for another. kInvalidInput, naming the file,
/// otherwise:
///   nodes/node03.json: the report of node node03 must hold that host alone; it holds node03, gpu07
[[nodiscard]] Status CheckNodeReports(const std::vector<SourcedReport>& inputs,
                                      const std::vector<std::string>& expected);

/// Reads each file of "paths" (ReadReportJson, or ReadJournal for a journal
/// that --journal wrote: journal.h), checks them with CheckNodeReports
/// against "expected" (--expect's hosts) and merges them.
/// Errors name the file: "r.json: cannot read: No such file or directory",
/// or those of ReadReportJson, CheckNodeReports and MergeReports; all are
/// kInvalidInput but for no paths.
[[nodiscard]] Status MergeReportFiles(const std::vector<std::string>& paths, RunReport* merged,
                                      const std::vector<std::string>& expected = {});

}  // namespace fleetreap
