#include "fleetreap/report/host_outcome.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/report/host_findings.h"

namespace fleetreap {
namespace {

std::string Plural(int count, const std::string& one, const std::string& many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

// "GPU 3" or "GPUs 3,5".
std::string GpuList(const std::vector<int>& indexes) {
  std::string out = indexes.size() == 1 ? "GPU " : "GPUs ";
  for (size_t i = 0; i < indexes.size(); ++i) {
    if (i > 0) out += ",";
    out += std::to_string(indexes[i]);
  }
  return out;
}

// Remote text made safe for one terminal line: control characters (escape
// sequences included) become '?', newlines spaces, and long text is cut.
std::string OneLine(const std::string& text, size_t kMax = 160) {
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

// "8/8 GPUs 0 MiB", or "8/8 GPUs <= 12 MiB" when daemons keep a little.
// GPUs outside the run's scope are neither counted nor quoted: "4/4 GPUs
// 0 MiB, 4 out of scope".
std::string GpuSummary(const HostReport& host) {
  const std::vector<GpuReading>& gpus = FinalGpus(host);
  if (gpus.empty()) return "0 GPUs";
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
  std::string out = std::to_string(clean) + "/" + std::to_string(in_scope) + " GPUs ";
  if (max_used > 0) out += "<= ";
  out += std::to_string(max_used) + " MiB";
  const int outside = static_cast<int>(gpus.size()) - in_scope;
  if (outside > 0) out += ", " + std::to_string(outside) + " GPUs out of scope";
  return out;
}

// Everything that keeps a reached host from being clean, by kind and GPU.
std::vector<std::string> Problems(const HostReport& host) {
  std::vector<std::string> problems;
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
    std::vector<std::string> names;
    std::vector<std::string> actions;  // kRecovery: what the driver asks for
    int64_t used_mib = 0;              // kGhost: the memory no process holds
    for (const GpuReading& gpu : FinalGpus(host)) {
      if (gpu.state != problem.state) continue;
      // A GPU nvidia-smi could not number is named by its bus id.
      names.push_back(gpu.index >= 0 ? std::to_string(gpu.index) : GpuLabel(gpu).substr(4));
      if (std::find(actions.begin(), actions.end(), gpu.recovery_action) == actions.end()) {
        actions.push_back(gpu.recovery_action);
      }
      if (gpu.used_mib) used_mib += *gpu.used_mib;
    }
    if (names.empty()) continue;
    std::string text =
        (names.size() == 1 ? "GPU " : "GPUs ") + JoinNonEmpty(names, ",") + " " + problem.text;
    if (problem.state == GpuState::kRecovery)
      text += " (" + OneLine(JoinNonEmpty(actions, ", ")) + ")";
    if (problem.state == GpuState::kGhost && used_mib > 0) {
      text += " (" + std::to_string(used_mib) + " MiB)";
    }
    problems.push_back(text);
  }
  int unkillable = CountFate(host, HolderFate::kUnkillable);
  if (unkillable > 0) problems.push_back(std::to_string(unkillable) + " unkillable");
  if (!host.respawning_parent.empty()) problems.push_back("holders respawning");
  if (!host.reset_blocked_by.empty()) {
    problems.push_back("reset blocked by " + OneLine(host.reset_blocked_by));
  }
  if (!host.nvidia_smi_error.empty() && problems.empty()) {
    problems.push_back("nvidia-smi failed");
  }
  if (host.error_kind != ErrorKind::kNone) {
    problems.push_back(ErrorKindName(host.error_kind));
  }
  return problems;
}

// What was left alone on purpose, and jobs that only look like daemons:
// "4 out of scope", "1 named like a daemon", "1 unit skipped".
std::vector<std::string> LeftAlone(const HostReport& host) {
  std::vector<std::string> parts;
  int foreign = CountFate(host, HolderFate::kOutOfScope);
  if (foreign > 0) parts.push_back(std::to_string(foreign) + " out of scope");
  int named_like = 0;
  for (const Holder& h : host.holders) named_like += !h.named_like.empty();
  if (named_like > 0) {
    parts.push_back(std::to_string(named_like) + " named like a daemon, not it");
  }
  if (!host.units_skipped.empty()) {
    parts.push_back(Plural(static_cast<int>(host.units_skipped.size()), "unit", "units") +
                    " skipped");
  }
  if (!host.shm_kept.empty()) {
    parts.push_back(
        Plural(static_cast<int>(host.shm_kept.size()), "/dev/shm entry", "/dev/shm entries") +
        " kept");
  }
  return parts;
}

// "text" and what was left alone, in one line.
std::string WithLeftAlone(const HostReport& host, const std::string& text) {
  std::vector<std::string> parts = {text};
  for (const std::string& part : LeftAlone(host)) parts.push_back(part);
  return JoinNonEmpty(parts, ", ");
}

std::string ActionsTaken(const HostReport& host) {
  std::vector<std::string> parts = {KilledSummary(host)};
  int gone = CountFate(host, HolderFate::kGone);
  if (gone > 0) parts.push_back(std::to_string(gone) + " gone");
  if (!host.units_stopped.empty()) {
    parts.push_back(Plural(static_cast<int>(host.units_stopped.size()), "unit", "units") +
                    " stopped");
  }
  if (!host.shm_removed.empty()) {
    parts.push_back(
        Plural(static_cast<int>(host.shm_removed.size()), "/dev/shm entry", "/dev/shm entries") +
        " removed");
  }
  if (!host.gpus_reset.empty()) parts.push_back(GpuList(host.gpus_reset) + " reset");
  if (!host.respawning_parent.empty() &&
      (host.status == HostStatus::kClean || host.status == HostStatus::kNotReady)) {
    // No PID in a row's text (rows fold hosts; the JSON keeps it): the
    // parent by name, "1234 (python3)" read as python3.
    const std::string& parent = host.respawning_parent;
    const size_t open = parent.find(" (");
    const bool pid_first = open != std::string::npos && open > 0 && parent.back() == ')' &&
                           parent.find_first_not_of("0123456789") == open;
    parts.push_back(
        "workers respawned by their parent " +
        OneLine(pid_first ? parent.substr(open + 2, parent.size() - open - 3) : parent));
  }
  return JoinNonEmpty(parts, ", ");
}

std::string ActionsPlanned(const HostReport& host) {
  std::vector<std::string> parts;
  int term = CountFate(host, HolderFate::kWouldTerm);
  int kill = CountFate(host, HolderFate::kWouldKill);
  if (term + kill > 0) {
    std::vector<std::string> signals;
    if (term > 0) signals.push_back("TERM " + std::to_string(term));
    if (kill > 0) signals.push_back("KILL " + std::to_string(kill));
    parts.push_back("would signal " + std::to_string(term + kill) + " (" +
                    JoinNonEmpty(signals, ", ") + ")");
  }
  if (!host.units_would_stop.empty()) {
    parts.push_back("would stop " +
                    Plural(static_cast<int>(host.units_would_stop.size()), "unit", "units"));
  }
  if (!host.shm_would_remove.empty()) {
    parts.push_back("would remove " + Plural(static_cast<int>(host.shm_would_remove.size()),
                                             "/dev/shm entry", "/dev/shm entries"));
  }
  return JoinNonEmpty(parts, ", ");
}

std::string WithAttempts(const HostReport& host, std::string text) {
  if (host.attempts > 1) text += " after " + std::to_string(host.attempts) + " attempts";
  return text;
}

bool IsWordByte(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '-';
}

// "text" with each whole-word "word" replaced by "with".
std::string ReplaceWord(const std::string& text, const std::string& word, const std::string& with) {
  if (word.size() < 2) return text;
  std::string out;
  size_t from = 0;
  for (size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const size_t end = at + word.size();
    if (at < from) continue;
    if ((at > 0 && IsWordByte(text[at - 1])) || (end < text.size() && IsWordByte(text[end]))) {
      continue;
    }
    out += text.substr(from, at - from) + with;
    from = end;
  }
  return out + text.substr(from);
}

}  // namespace

std::string GhostMemoryRemedy(const HostReport& host) {
  if (!host.gpus_reset.empty() || !host.reset_blocked_by.empty()) return "";
  for (const GpuReading& gpu : FinalGpus(host)) {
    if (gpu.state == GpuState::kGhost) {
      return "ghost memory needs a GPU reset: run with --playbook reset.yaml";
    }
  }
  return "";
}

std::string HostReason(const HostReport& host, bool dry_run) {
  if (host.status == HostStatus::kClean) return "";
  std::string reason;
  const std::string message = HostMessage(host);
  if (!message.empty()) {
    reason = OneLine(message, 300);
    if (OutcomeOf(host, dry_run).detail.find(reason) != std::string::npos) reason.clear();
  }
  const std::string remedy = GhostMemoryRemedy(host);
  if (!remedy.empty()) reason += (reason.empty() ? "" : "; ") + remedy;
  return reason;
}

std::string GenericReason(const HostReport& host, bool dry_run) {
  std::string reason = HostReason(host, dry_run);
  if (!host.host_key_fingerprint.empty()) {
    reason = ReplaceWord(reason, host.host_key_fingerprint, "<key>");
  }
  reason = ReplaceWord(reason, host.address, "<address>");
  return ReplaceWord(reason, host.name, "<host>");
}

const char* OutcomeKindLabel(OutcomeKind kind) {
  switch (kind) {
    case OutcomeKind::kClean: return "clean";
    case OutcomeKind::kCleaned: return "cleaned";
    case OutcomeKind::kWouldClean: return "would clean";
    case OutcomeKind::kDirty: return "dirty";
    case OutcomeKind::kNotReady: return "not ready";
    case OutcomeKind::kFailed: return "failed";
    case OutcomeKind::kUnreachable: return "unreachable";
    case OutcomeKind::kNotStarted: return "not started";
    case OutcomeKind::kNoReport: return "no report";
  }
  return "failed";
}

bool HostChanged(const HostReport& host) {
  return CountFate(host, HolderFate::kTerminated) > 0 || CountFate(host, HolderFate::kKilled) > 0 ||
         host.term_sent > 0 || host.kill_sent > 0 || !host.units_stopped.empty() ||
         !host.shm_removed.empty() || !host.gpus_reset.empty();
}

std::string KilledSummary(const HostReport& host) {
  int term = CountFate(host, HolderFate::kTerminated);
  int kill = CountFate(host, HolderFate::kKilled);
  if (term + kill == 0) return "";
  std::vector<std::string> signals;
  if (term > 0) signals.push_back("TERM " + std::to_string(term));
  if (kill > 0) signals.push_back("KILL " + std::to_string(kill));
  return std::to_string(term + kill) + " killed (" + JoinNonEmpty(signals, ", ") + ")";
}

std::string ReadinessSummary(const HostReport& host) {
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
  if (more > 0) first += " (+" + std::to_string(more) + " more)";
  return first;
}

std::string NotReadySummary(const HostReport& host) {
  std::string readiness = ReadinessSummary(host);
  if (!readiness.empty()) return readiness;
  const bool restarter = std::any_of(
      host.findings.begin(), host.findings.end(),
      [](const HostFinding& f) { return f.reason && f.kind == finding_kind::kRestarterAlive; });
  return restarter ? ActionsTaken(host) + ", which lives on" : "";
}

HostOutcome OutcomeOf(const HostReport& host, bool dry_run) {
  HostOutcome outcome;
  switch (host.status) {
    case HostStatus::kUnreachable: {
      const char* kind =
          host.error_kind == ErrorKind::kNone ? "unreachable" : ErrorKindName(host.error_kind);
      return {OutcomeKind::kUnreachable, WithAttempts(host, kind)};
    }
    case HostStatus::kFailed: {
      std::string detail =
          host.error_kind == ErrorKind::kNone ? "failed" : ErrorKindName(host.error_kind);
      // These kinds say nothing on their own; the message says what failed.
      if ((host.error_kind == ErrorKind::kCommandFailed ||
           host.error_kind == ErrorKind::kInternal || host.error_kind == ErrorKind::kParse) &&
          !HostMessage(host).empty()) {
        detail += ": " + OneLine(HostMessage(host));
      }
      return {OutcomeKind::kFailed, detail};
    }
    case HostStatus::kClean: {
      if (dry_run) {
        std::string planned = ActionsPlanned(host);
        if (!planned.empty()) return {OutcomeKind::kWouldClean, WithLeftAlone(host, planned)};
      }
      if (HostChanged(host)) {
        return {OutcomeKind::kCleaned, WithLeftAlone(host, ActionsTaken(host))};
      }
      return {OutcomeKind::kClean, WithLeftAlone(host, GpuSummary(host))};
    }
    case HostStatus::kNotReady: {
      const std::string summary = NotReadySummary(host);
      return {OutcomeKind::kNotReady, summary.empty() ? "not ready" : summary};
    }
    case HostStatus::kDirty: {
      std::vector<std::string> problems = Problems(host);
      std::string planned = dry_run ? ActionsPlanned(host) : "";
      // In a dry run, busy GPUs are what the planned signals fix.
      bool only_busy = true;
      for (const GpuReading& gpu : FinalGpus(host)) {
        if (!GpuStateIsClean(gpu.state) && gpu.state != GpuState::kBusy) {
          only_busy = false;
        }
      }
      if (!planned.empty() && only_busy && host.error_kind == ErrorKind::kNone &&
          CountFate(host, HolderFate::kUnkillable) == 0 && host.respawning_parent.empty()) {
        return {OutcomeKind::kWouldClean, WithLeftAlone(host, planned)};
      }
      std::string detail = problems.empty() ? "not clean" : JoinNonEmpty(problems, ", ");
      std::string taken = WithLeftAlone(host, dry_run ? planned : ActionsTaken(host));
      if (!taken.empty()) detail += "; " + std::string(dry_run ? "" : "after ") + taken;
      return {OutcomeKind::kDirty, detail};
    }
  }
  return outcome;
}

}  // namespace fleetreap
