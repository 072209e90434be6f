// HostOutcome's detail (host_outcome_internal.h): what a host's row says,
// built as words and values (outcome_detail.h).
#include <algorithm>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/report/host_findings.h"
#include "host_outcome_internal.h"

namespace fleetreap {
namespace host_outcome_internal {

// Remote text made safe for one terminal line: control characters (escape
// sequences included) become '?', newlines spaces, and long text is cut.
std::string OneLine(const std::string& text, size_t kMax) {
  std::string out;
  for (char c : text) {
    if (out.size() >= kMax) {
      out += "...";
      break;
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (c == '\n' || c == '\r' || c == '\t') {
      out += ' ';
    } else if (u < 0x20 || u == 0x7f) {
      out += '?';
    } else {
      out += c;
    }
  }
  return out;
}

const std::vector<GpuReading>& FinalGpus(const HostReport& host) {
  return host.gpus_after.empty() ? host.gpus_before : host.gpus_after;
}

int CountFate(const HostReport& host, HolderFate fate) {
  return static_cast<int>(
      std::count_if(host.holders.begin(), host.holders.end(),
                    [fate](const Holder& holder) { return holder.fate == fate; }));
}

namespace {

// "TERM 6, KILL 2": each signal that was (or would be) sent, with its count.
OutcomeDetail Signals(int term, int kill) {
  std::vector<OutcomeDetail> signals;
  if (term > 0) signals.push_back(OutcomeDetail().Text("TERM ").Count(term));
  if (kill > 0) signals.push_back(OutcomeDetail().Text("KILL ").Count(kill));
  return JoinDetails(signals, ", ");
}

// "8 units" (the count a value, the word as words).
OutcomeDetail Plural(int count, const std::string& one, const std::string& many) {
  return OutcomeDetail().Count(count).Text(" " + (count == 1 ? one : many));
}

// "8/8 GPUs 0 MiB", or "8/8 GPUs <= 12 MiB" when daemons keep a little.
// GPUs outside the run's scope are neither counted nor quoted: "4/4 GPUs
// 0 MiB, 4 GPUs out of scope".
OutcomeDetail GpuSummary(const HostReport& host) {
  const std::vector<GpuReading>& gpus = FinalGpus(host);
  if (gpus.empty()) return OutcomeDetail().Count(0).Text(" GPUs");
  int clean = 0;
  int in_scope = 0;
  int64_t max_used = 0;
  for (const GpuReading& gpu : gpus) {
    if (gpu.state == GpuState::kOutOfScope) continue;
    ++in_scope;
    if (GpuStateIsClean(gpu.state)) {
      ++clean;
    }
    if (gpu.used_mib) max_used = std::max(max_used, *gpu.used_mib);
  }
  OutcomeDetail out;
  out.Count(clean).Text("/").Count(in_scope).Text(" GPUs ");
  if (max_used > 0) out.Text("<= ");
  out.Count(max_used).Text(" MiB");
  const int outside = static_cast<int>(gpus.size()) - in_scope;
  if (outside > 0) out.Text(", ").Count(outside).Text(" GPUs out of scope");
  return out;
}

// Everything that keeps a reached host from being clean, by kind and GPU.
std::vector<OutcomeDetail> Problems(const HostReport& host) {
  std::vector<OutcomeDetail> problems;
  struct StateProblem {
    GpuState state;
    const char* text;  // follows the GPU list
  };
  const StateProblem kStateProblems[] = {
      {GpuState::kBusy, "busy"},       {GpuState::kGhost, "ghost memory"},
      {GpuState::kLost, "lost"},       {GpuState::kMissing, "missing"},
      {GpuState::kUnknown, "unknown"}, {GpuState::kRecovery, "needs recovery"},
  };
  for (const StateProblem& problem : kStateProblems) {
    std::vector<int> indexes;
    std::vector<std::string> names;
    bool by_bus_id = false;
    std::vector<std::string> actions;  // kRecovery: what the driver asks for
    int64_t used_mib = 0;              // kGhost: the memory no process holds
    for (const GpuReading& gpu : FinalGpus(host)) {
      if (gpu.state != problem.state) continue;
      // A GPU nvidia-smi could not number is named by its bus id.
      by_bus_id = by_bus_id || gpu.index < 0;
      indexes.push_back(gpu.index);
      names.push_back(gpu.index >= 0 ? std::to_string(gpu.index) : GpuLabel(gpu).substr(4));
      if (std::find(actions.begin(), actions.end(), gpu.recovery_action) == actions.end()) {
        actions.push_back(gpu.recovery_action);
      }
      if (gpu.used_mib) used_mib += *gpu.used_mib;
    }
    if (names.empty()) continue;
    OutcomeDetail text;
    if (by_bus_id) {
      text.Text((names.size() == 1 ? "GPU " : "GPUs ") + JoinNonEmpty(names, ","));
    } else {
      text.Gpus(indexes);
    }
    text.Text(std::string(" ") + problem.text);
    if (problem.state == GpuState::kRecovery) {
      text.Text(" (" + OneLine(JoinNonEmpty(actions, ", ")) + ")");
    }
    if (problem.state == GpuState::kGhost && used_mib > 0) {
      text.Text(" (").Count(used_mib).Text(" MiB)");
    }
    problems.push_back(text);
  }
  int unkillable = CountFate(host, HolderFate::kUnkillable);
  if (unkillable > 0) problems.push_back(OutcomeDetail().Count(unkillable).Text(" unkillable"));
  if (!host.respawning_parent.empty())
    problems.push_back(OutcomeDetail::Words("holders respawning"));
  if (!host.reset_blocked_by.empty()) {
    problems.push_back(OutcomeDetail::Words("reset blocked by " + OneLine(host.reset_blocked_by)));
  }
  if (!host.nvidia_smi_error.empty() && problems.empty()) {
    problems.push_back(OutcomeDetail::Words("nvidia-smi failed"));
  }
  if (host.error_kind != ErrorKind::kNone) {
    problems.push_back(OutcomeDetail::Words(ErrorKindName(host.error_kind)));
  }
  return problems;
}

// What was left alone on purpose, and jobs that only look like daemons:
// "4 out of scope", "1 named like a daemon", "1 unit skipped".
std::vector<OutcomeDetail> LeftAlone(const HostReport& host) {
  std::vector<OutcomeDetail> parts;
  int foreign = CountFate(host, HolderFate::kOutOfScope);
  if (foreign > 0) parts.push_back(OutcomeDetail().Count(foreign).Text(" out of scope"));
  int named_like = 0;
  for (const Holder& h : host.holders) named_like += !h.named_like.empty();
  if (named_like > 0) {
    parts.push_back(OutcomeDetail().Count(named_like).Text(" named like a daemon, not it"));
  }
  if (!host.units_skipped.empty()) {
    parts.push_back(
        Plural(static_cast<int>(host.units_skipped.size()), "unit", "units").Text(" skipped"));
  }
  if (!host.shm_kept.empty()) {
    parts.push_back(
        Plural(static_cast<int>(host.shm_kept.size()), "/dev/shm entry", "/dev/shm entries")
            .Text(" kept"));
  }
  return parts;
}

// "text" and what was left alone, in one line.
OutcomeDetail WithLeftAlone(const HostReport& host, const OutcomeDetail& text) {
  std::vector<OutcomeDetail> parts = {text};
  for (const OutcomeDetail& part : LeftAlone(host)) parts.push_back(part);
  return JoinDetails(parts, ", ");
}

OutcomeDetail ActionsTaken(const HostReport& host) {
  std::vector<OutcomeDetail> parts = {Killed(host)};
  int gone = CountFate(host, HolderFate::kGone);
  if (gone > 0) parts.push_back(OutcomeDetail().Count(gone).Text(" gone"));
  if (!host.units_stopped.empty()) {
    parts.push_back(
        Plural(static_cast<int>(host.units_stopped.size()), "unit", "units").Text(" stopped"));
  }
  if (!host.shm_removed.empty()) {
    parts.push_back(
        Plural(static_cast<int>(host.shm_removed.size()), "/dev/shm entry", "/dev/shm entries")
            .Text(" removed"));
  }
  if (!host.gpus_reset.empty())
    parts.push_back(OutcomeDetail().Gpus(host.gpus_reset).Text(" reset"));
  if (!host.respawning_parent.empty() &&
      (host.status == HostStatus::kClean || host.status == HostStatus::kNotReady)) {
    // No PID in a row's text (rows fold hosts; the JSON keeps it): the
    // parent by name, "1234 (python3)" read as python3.
    const std::string& parent = host.respawning_parent;
    const size_t open = parent.find(" (");
    const bool pid_first = open != std::string::npos && open > 0 && parent.back() == ')' &&
                           parent.find_first_not_of("0123456789") == open;
    parts.push_back(OutcomeDetail::Words(
        "workers respawned by their parent " +
        OneLine(pid_first ? parent.substr(open + 2, parent.size() - open - 3) : parent)));
  }
  return JoinDetails(parts, ", ");
}

OutcomeDetail ActionsPlanned(const HostReport& host) {
  std::vector<OutcomeDetail> parts;
  int term = CountFate(host, HolderFate::kWouldTerm);
  int kill = CountFate(host, HolderFate::kWouldKill);
  if (term + kill > 0) {
    parts.push_back(OutcomeDetail()
                        .Text("would signal ")
                        .Count(term + kill)
                        .Text(" (")
                        .Append(Signals(term, kill))
                        .Text(")"));
  }
  if (!host.units_would_stop.empty()) {
    parts.push_back(
        OutcomeDetail()
            .Text("would stop ")
            .Append(Plural(static_cast<int>(host.units_would_stop.size()), "unit", "units")));
  }
  if (!host.shm_would_remove.empty()) {
    parts.push_back(OutcomeDetail()
                        .Text("would remove ")
                        .Append(Plural(static_cast<int>(host.shm_would_remove.size()),
                                       "/dev/shm entry", "/dev/shm entries")));
  }
  return JoinDetails(parts, ", ");
}

OutcomeDetail WithAttempts(const HostReport& host, const std::string& text) {
  OutcomeDetail detail = OutcomeDetail::Words(text);
  if (host.attempts > 1) detail.Text(" after ").Count(host.attempts).Text(" attempts");
  return detail;
}

}  // namespace

// "8 killed (TERM 6, KILL 2)"; empty when none was.
OutcomeDetail Killed(const HostReport& host) {
  int term = CountFate(host, HolderFate::kTerminated);
  int kill = CountFate(host, HolderFate::kKilled);
  if (term + kill == 0) return {};
  return OutcomeDetail().Count(term + kill).Text(" killed (").Append(Signals(term, kill)).Text(")");
}

// The blocking readiness findings as one line: the first one's words and
// " (+N more)".
OutcomeDetail Readiness(const HostReport& host) {
  std::string first;
  int more = 0;
  for (const ReadinessFinding& finding : host.readiness) {
    if (finding.severity != FindingSeverity::kBlock) continue;
    if (first.empty()) {
      first = OneLine(FindingText(finding), 240);
    } else {
      ++more;
    }
  }
  OutcomeDetail detail = OutcomeDetail::Words(first);
  if (more > 0) detail.Text(" (+").Count(more).Text(" more)");
  return detail;
}

OutcomeDetail NotReady(const HostReport& host) {
  OutcomeDetail readiness = Readiness(host);
  if (!readiness.empty()) return readiness;
  const bool restarter = std::any_of(
      host.findings.begin(), host.findings.end(),
      [](const HostFinding& f) { return f.reason && f.kind == finding_kind::kRestarterAlive; });
  return restarter ? ActionsTaken(host).Text(", which lives on") : OutcomeDetail();
}

OutcomeDetail DetailOf(const HostReport& host, bool dry_run, OutcomeKind* kind) {
  switch (host.status) {
    case HostStatus::kUnreachable: {
      *kind = OutcomeKind::kUnreachable;
      return WithAttempts(host, host.error_kind == ErrorKind::kNone
                                    ? "unreachable"
                                    : ErrorKindName(host.error_kind));
    }
    case HostStatus::kFailed: {
      *kind = OutcomeKind::kFailed;
      std::string detail =
          host.error_kind == ErrorKind::kNone ? "failed" : ErrorKindName(host.error_kind);
      // These kinds say nothing on their own; the message says what failed.
      if ((host.error_kind == ErrorKind::kCommandFailed ||
           host.error_kind == ErrorKind::kInternal || host.error_kind == ErrorKind::kParse) &&
          !HostMessage(host).empty()) {
        detail += ": " + OneLine(HostMessage(host));
      }
      return OutcomeDetail::Words(detail);
    }
    case HostStatus::kClean: {
      if (dry_run) {
        OutcomeDetail planned = ActionsPlanned(host);
        if (!planned.empty()) {
          *kind = OutcomeKind::kWouldClean;
          return WithLeftAlone(host, planned);
        }
      }
      if (HostChanged(host)) {
        *kind = OutcomeKind::kCleaned;
        return WithLeftAlone(host, ActionsTaken(host));
      }
      *kind = OutcomeKind::kClean;
      return WithLeftAlone(host, GpuSummary(host));
    }
    case HostStatus::kNotReady: {
      *kind = OutcomeKind::kNotReady;
      OutcomeDetail summary = NotReady(host);
      return summary.empty() ? OutcomeDetail::Words("not ready") : summary;
    }
    case HostStatus::kDirty: {
      std::vector<OutcomeDetail> problems = Problems(host);
      OutcomeDetail planned = dry_run ? ActionsPlanned(host) : OutcomeDetail();
      // In a dry run, busy GPUs are what the planned signals fix.
      bool only_busy = true;
      for (const GpuReading& gpu : FinalGpus(host)) {
        if (!GpuStateIsClean(gpu.state) && gpu.state != GpuState::kBusy) {
          only_busy = false;
        }
      }
      if (!planned.empty() && only_busy && host.error_kind == ErrorKind::kNone &&
          CountFate(host, HolderFate::kUnkillable) == 0 && host.respawning_parent.empty()) {
        *kind = OutcomeKind::kWouldClean;
        return WithLeftAlone(host, planned);
      }
      *kind = OutcomeKind::kDirty;
      OutcomeDetail detail =
          problems.empty() ? OutcomeDetail::Words("not clean") : JoinDetails(problems, ", ");
      OutcomeDetail taken = WithLeftAlone(host, dry_run ? planned : ActionsTaken(host));
      if (!taken.empty()) detail.Text(std::string("; ") + (dry_run ? "" : "after ")).Append(taken);
      return detail;
    }
  }
  *kind = OutcomeKind::kFailed;
  return {};
}

}  // namespace host_outcome_internal
}  // namespace fleetreap
