#include "fleetreap/report/host_outcome.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/report/host_findings.h"
#include "host_outcome_internal.h"

namespace fleetreap {
namespace {

using host_outcome_internal::CountFate;
using host_outcome_internal::DetailOf;
using host_outcome_internal::FinalGpus;
using host_outcome_internal::Killed;
using host_outcome_internal::NotReady;
using host_outcome_internal::OneLine;
using host_outcome_internal::Readiness;

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

std::string KilledSummary(const HostReport& host) { return Killed(host).Render(); }

std::string ReadinessSummary(const HostReport& host) { return Readiness(host).Render(); }

std::string NotReadySummary(const HostReport& host) { return NotReady(host).Render(); }

HostOutcome OutcomeOf(const HostReport& host, bool dry_run) {
  HostOutcome outcome;
  outcome.phrase = DetailOf(host, dry_run, &outcome.kind);
  outcome.detail = outcome.phrase.Render();
  return outcome;
}

}  // namespace fleetreap
