// HostOutcome: the one-line human verdict on a host ("cleaned  8 killed
// (TERM 6, KILL 2)"), shared by the folded table, the Markdown summary, the
// per-host CI progress lines and the JUnit messages, so that all of them say
// the same thing. Pure functions of report data; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/report/outcome_detail.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

/// What a host's line says, in the order the table lists them: what needs no
/// attention first, problems last, next to the verdict.
enum class OutcomeKind {
  kClean,        // clean, and nothing needed doing
  kCleaned,      // clean after fleetreap acted on it
  kWouldClean,   // dry run: clean once the listed actions are taken
  kDirty,        // reached, and still not clean
  kNotReady,     // empty, but a readiness finding blocks the next job
  kFailed,       // reached, but the cleanup could not run (sudo, timeout...)
  kUnreachable,  // never reached
  kNotStarted,   // the run was interrupted before this host started
  kNoReport,     // no result: in flight when a journal ended, or missing from a merge
};

/// Where rows of "kind" go in the table and the other reports: problems
/// first (dirty 0, not ready, failed, unreachable, no report, not started), then would
/// clean, cleaned, clean (7).
int OutcomeRank(OutcomeKind kind);

/// "clean", "cleaned", "would clean", "dirty", "not ready", "failed",
/// "unreachable", "not started", "no report".
const char* OutcomeKindLabel(OutcomeKind kind);

struct HostOutcome {
  OutcomeKind kind = OutcomeKind::kFailed;
  /// Counts and kinds only, never addresses or PIDs, so that hosts with the
  /// same story get the same text and fold together: "8/8 GPUs 0 MiB",
  /// "8 killed (TERM 6, KILL 2), 1 unit stopped", "connect_timeout",
  /// "GPUs 2,6 ghost memory (2048 MiB)" (the ghost GPUs' memory in all).
  std::string detail;
  /// The same as words and values, which the folds read (never "detail").
  OutcomeDetail phrase;
};

/// The outcome of "host" in a run that was a dry run when "dry_run" is set.
HostOutcome OutcomeOf(const HostReport& host, bool dry_run);

/// True when fleetreap changed something on "host": a holder signalled, a
/// unit stopped, a /dev/shm entry removed or a GPU reset.
bool HostChanged(const HostReport& host);

/// "8 killed (TERM 6, KILL 2)" for holders that exited after TERM or KILL;
/// "" when none did.
std::string KilledSummary(const HostReport& host);

/// The sentence that says why "host" is not clean and, where fleetreap knows
/// it, what to do ("host key for gpu03 ([127.0.1.3]:22) is not in known_hosts
/// ... (offered SHA256:...); add it, or use --host-key-policy accept-new"):
/// its error_message made one printable line (control characters '?', line
/// breaks spaces, cut at 300 characters), left out when the outcome's detail
/// already holds it, then its GhostMemoryRemedy (after "; " when both are
/// there). "" for a clean host, and for one with neither.
std::string HostReason(const HostReport& host, bool dry_run);

/// What to do about ghost memory (a GPU over the threshold that no process
/// holds: only a GPU reset frees it): "ghost memory needs a GPU reset: run
/// with --playbook reset.yaml" when a GPU of "host"'s last reading is ghost
/// and the run tried no reset there; "" otherwise (a reset that was blocked
/// or done is in the outcome already). The same for every host, so that the
/// hosts of a table row share it.
std::string GhostMemoryRemedy(const HostReport& host);

/// The blocking readiness findings of "host" as one line: the first one's
/// FindingText and " (+N more)"; "" when none blocks.
std::string ReadinessSummary(const HostReport& host);

/// Why "host" is not ready, as the table says it: its ReadinessSummary, else,
/// when a restarter that started its holders again lives on, what was done
/// ("9 killed (TERM 9), workers respawned by their parent supervisor.py")
/// and ", which lives on" (the reason under the row names it with its stop
/// command); "" when neither.
std::string NotReadySummary(const HostReport& host);

/// HostReason with what differs from host to host taken out, so hosts with
/// the same story share it: the host's key fingerprint becomes "<key>", its
/// address "<address>", its name "<host>" (each only as a whole word).
std::string GenericReason(const HostReport& host, bool dry_run);

/// Hosts that share an outcome: same kind, and details that differ at most
/// in their counts and GPU indexes.
struct OutcomeGroup {
  OutcomeKind kind = OutcomeKind::kClean;
  /// The members' detail, with each count that differs as its range ("8-9
  /// killed (TERM 4-9)") and each GPU list as the union ("GPUs 2,6 ghost
  /// memory").
  std::string detail;
  std::vector<std::string> names;  // in report order
};

/// The report's hosts gathered by outcome (outcome_groups.cc): one group per
/// kind and detail "shape" (OutcomeShape), never-started hosts as one "not
/// started" group ("interrupted"), hosts without a report as "no report"
/// groups (by MissingReport::why); problems first (dirty, failed,
/// unreachable, no report, not started), then would clean, cleaned, clean,
/// and by first appearance within a kind.
std::vector<OutcomeGroup> GroupOutcomes(const RunReport& report);

/// What GroupOutcomes folds on: "detail"'s OutcomeDetail::Shape, each count
/// "#" and each problem's GPU list "GPU @": "# killed (TERM #)", "GPU @
/// ghost memory".
std::string OutcomeShape(const OutcomeDetail& detail);

}  // namespace fleetreap
