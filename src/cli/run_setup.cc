#include "run_setup.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>

#include "command_support.h"
#include "fleetreap/base/exit_code.h"
#include "fleetreap/cli/run_identity.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/escalation/scope.h"
#include "fleetreap/transport/ssh_known_hosts.h"

namespace fleetreap {

Status CheckRunOutputs(const Options& options, ReportFiles* files) {
  *files = ReportFilesFor(options);
  files->journal = JournalPathFor(options);
  Status status = CheckOutputPaths(*files);
  if (status.ok() && !options.local && options.host_key_policy != HostKeyPolicy::kOff) {
    status = CheckKnownHostsFile(options.known_hosts,
                                 options.host_key_policy == HostKeyPolicy::kAcceptNew);
  }
  return status;
}

Status PrepareRun(const Options& options, const Environment& env, const FleetPlanSet& set,
                  PreparedRun* run) {
  run->settings = FleetSettingsFor(options);
  run->settings.audit = RunAuditFor(env);
  Status status = RunScopeFor(options, env, &run->settings.scope);
  if (!status.ok()) return status;
  if (!options.log_dir.empty()) {
    status = CommandLog::Open(options.log_dir, &run->log);
    if (!status.ok()) return Status::Error(ErrorKind::kUsage, status.message());
  }
  if (!run->settings.scope.empty()) spdlog::info("scope: {}", DescribeScope(run->settings.scope));
  // The id each host's audit lines carry (docs/audit.md).
  spdlog::info("run {}", run->settings.audit.run_id);
  run->transports = MakeTransportFactory(options, run->log.get());
  run->journal = JournalPathFor(options);
  run->header = RunHeaderFor(options, set.playbook_name, run->settings.scope);
  run->header.run_id = run->settings.audit.run_id;
  const std::string host_key_warning = HostKeyPolicyWarning(options);
  if (!host_key_warning.empty()) spdlog::warn("{}", host_key_warning);
  run->stop = InstallInterruptHandler();
  RaiseDescriptorLimit(static_cast<int>(
      std::min<size_t>(set.plans.size(), static_cast<size_t>(run->settings.forks))));
  return Status::Ok();
}

Status OpenRunJournal(const PreparedRun& run, const std::vector<FleetPlan>& plans,
                      std::unique_ptr<Journal>* journal) {
  if (run.journal.empty()) return Status::Ok();
  std::vector<std::string> selected;
  for (const FleetPlan& plan : plans) selected.push_back(plan.host.name);
  RunReport header = run.header;
  header.start_time = std::chrono::system_clock::now();
  return Journal::Open(run.journal, header, selected, journal);
}

void StampRun(const PreparedRun& run, RunReport* report) {
  report->tool_version = run.header.tool_version;
  report->playbook = run.header.playbook;
  report->host_key_policy = run.header.host_key_policy;
  report->run_id = run.header.run_id;
}

void DropDefaultJournal(const Options& options, const PreparedRun& run, int code,
                        std::unique_ptr<Journal>* journal) {
  if (*journal == nullptr || !options.journal.empty() || code == kExitSoftware) return;
  journal->reset();
  std::remove(run.journal.c_str());
}

}  // namespace fleetreap
