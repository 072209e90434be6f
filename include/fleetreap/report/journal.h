// Journal: the run's record as it happens (--journal FILE, by default
// beside --json as JSON.journal). JSON lines, one per event, each written
// and fsync'd before the run goes on, so a controller killed with SIGKILL
// leaves every finished host's full record and the names of the hosts in
// flight. "-" writes the same lines to stdout as hosts end: the run's JSON
// lines stream, for a pipe (a line is written whole, fsync'd only in a file). `fleetreap merge`
// reads a journal back (ReadJournal) into the normal reports. The file is created mode 0600,
// truncated if it existed.
//
//   {"fleetreap_journal":1,"run":{...the JSON report, no hosts...},"selected":["gpu01",...]}
//   {"event":"started","host":"gpu01","t_ms":3}
//   {"event":"finished","t_ms":1204,"host":{...one host, as in the report...}}
//   {"event":"ended","t_ms":1300,"interrupted":false}
//
// A Journal is thread-compatible: one thread writes it (the one that drives
// the FleetObserver). ReadJournal is a pure function.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

/// What ReadJournal gives a host that started and never finished.
inline constexpr char kInFlightWhenJournalEnded[] = "in flight when the journal ended";

class Journal {
 public:
  /// Creates (or truncates) "path" with mode 0600, never following a
  /// symlink there ("-": writes to stdout instead), and writes the first line: "run" (its tool,
  /// start time, playbook, dry run, host key policy and scope; hosts are ignored) and the
  /// "selected" host names in inventory order. kInternal "cannot write
  /// PATH: REASON" on failure.
  static Status Open(const std::string& path, const RunReport& run,
                     const std::vector<std::string>& selected, std::unique_ptr<Journal>* out);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  /// One line each, written whole and fsync'd before returning. kInternal
  /// on a failed write; later calls still try.
  Status Started(const std::string& name);
  Status Finished(const HostReport& host);
  /// The last line: the run ended on its own (interrupted by Ctrl-C or not).
  /// "stopped": RunReport::stopped, kept when not empty ("stopped":"...").
  Status Ended(bool interrupted, const std::string& stopped = "");

  const std::string& path() const { return path_; }

 private:
  Journal(std::string path, int fd, bool dry_run);
  Status Append(const std::string& line);
  long long ElapsedMs() const;

  std::string path_;
  int fd_;
  bool sync_ = false;  // fsync each line: a regular file, not a pipe or a terminal
  bool dry_run_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

/// True when "text" starts like a journal (its first line is a
/// {"fleetreap_journal":...} object), so merge can tell it from a report.
bool LooksLikeJournal(const std::string& text);

/// Reads a journal back into "report": the run's fields from the first
/// line; every finished host, in the order of "selected"; a host that
/// started and never finished in report->no_report with the why
/// kInFlightWhenJournalEnded; every other selected host in not_started.
/// Without an "ended" line (the controller died) the report is marked
/// interrupted. The duration is the last line's t_ms. A last line cut off
/// without its '\n' (killed while writing) is ignored; unknown events are
/// skipped. Errors (kInvalidInput) name the source and the line:
///   run.journal:1: not a fleetreap journal
///   run.journal:4: not JSON (parse error at byte 12)
///   run.journal:4: host.port: expected an integer, got string
///   run.journal:5: host gpu09 is not among the selected hosts
[[nodiscard]] Status ReadJournal(const std::string& text, const std::string& source,
                                 RunReport* report);

}  // namespace fleetreap
