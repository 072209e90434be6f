#include "fleetreap/report/report_fold.h"

#include <utility>

#include "fleetreap/base/exit_code.h"
#include "fleetreap/report/report_table.h"

namespace fleetreap {

ReportFold::ReportFold(bool dry_run) : dry_run_(dry_run) {}

ReportFold ReportFold::Of(const RunReport& report) { return FoldOfHosts<ReportFold>(report); }

void ReportFold::Add(size_t index, const HostReport& host) {
  const HostOutcome outcome = OutcomeOf(host, dry_run_);
  ++hosts_;
  ++by_status_[static_cast<int>(host.status)];
  ++by_outcome_[static_cast<int>(outcome.kind)];
  if (HostChanged(host)) ++changed_;
  outcomes_.Add(index, outcome.kind, outcome.phrase, host.name);
  HostRowNotes notes{RowDetailLines(host), GenericReason(host, dry_run_),
                     HostReason(host, dry_run_)};
  if (!notes.lines.empty() || !notes.generic_reason.empty() || !notes.reason.empty()) {
    notes_.emplace(host.name, std::move(notes));
  }
  step_times_.Add(index, host);
  causes_.Add(index, host);
  if (dry_run_) plan_.Add(index, host);
  if (host.status != HostStatus::kClean) not_clean_.emplace(index, host);
}

std::vector<OutcomeGroup> ReportFold::Groups(const RunReport& header) const {
  OutcomeFold all = outcomes_;
  // After every folded host, whatever its index, as GroupOutcomes puts them.
  size_t order = static_cast<size_t>(-1) / 2;
  for (const HostWithoutResult& host : HostsWithoutResult(header)) {
    all.Add(order++, host.started_never ? OutcomeKind::kNotStarted : OutcomeKind::kNoReport,
            OutcomeDetail::Words(host.why), host.name);
  }
  return all.Groups();
}

const HostRowNotes* ReportFold::NotesOf(const std::string& name) const {
  auto it = notes_.find(name);
  return it == notes_.end() ? nullptr : &it->second;
}

RunReport ReportFold::WithHostsNotClean(const RunReport& header) const {
  RunReport out = header;
  out.hosts.clear();
  for (const auto& [index, host] : not_clean_) out.hosts.push_back(host);
  return out;
}

int ExitCodeFor(const RunReport& header, const ReportFold& fold) {
  int code = kExitClean;
  if (!header.dry_run && fold.Count(HostStatus::kDirty) + fold.Count(HostStatus::kNotReady) > 0) {
    code |= kExitDirty;
  }
  if (fold.Count(HostStatus::kUnreachable) + fold.Count(HostStatus::kFailed) > 0) {
    code |= kExitUnreachable;
  }
  // Hosts never started were selected and are not known to be clean.
  if (!header.not_started.empty() || !header.no_report.empty()) code |= kExitUnreachable;
  if (!header.stopped.empty()) code |= kExitStopped;
  return code;
}

}  // namespace fleetreap
