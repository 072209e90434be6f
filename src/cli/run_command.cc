// RunCommand (commands.h): a run from its options to its exit code: the
// plans, the outputs checked, the progress line and the journal, the hosts
// cleaned in waves, the reports written.
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "command_support.h"
#include "fleetreap/base/clock.h"
#include "fleetreap/base/exit_code.h"
#include "fleetreap/cli/commands.h"
#include "fleetreap/cli/host_listing.h"
#include "fleetreap/cli/progress.h"
#include "fleetreap/cli/run_identity.h"
#include "fleetreap/cli/run_observers.h"
#include "fleetreap/cli/wave_flags.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/escalation/scope.h"
#include "fleetreap/report/journal.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_stream.h"
#include "fleetreap/runner/wave_runner.h"
#include "fleetreap/transport/command_log.h"
#include "fleetreap/transport/ssh_known_hosts.h"

namespace fleetreap {
namespace {

// The plans, their waves and where the run writes.
struct RunInputs {
  FleetPlanSet set;
  std::vector<Wave> waves;
  FailCap cap;
  ReportFiles files;
  std::unique_ptr<CommandLog> log;
};

// --list-hosts: the waves (with a wave flag and no --json) or the hosts.
int ListHosts(const Options& options, const RunInputs& in) {
  if (WantsWaves(options) && options.json.empty()) {
    return WriteHostListing(DescribeWaves(options, in.set.plans, in.waves, in.cap), "")
               ? kExitClean
               : kExitUsage;
  }
  return WriteHostListing(HostListingFor(in.set, options), options.json) ? kExitClean : kExitUsage;
}

// Every output is checked before any host is touched: a bad path costs
// nothing but this message.
Status OpenOutputs(const Options& options, RunInputs* in) {
  in->files = ReportFilesFor(options);
  in->files.journal = JournalPathFor(options);
  Status status = CheckOutputPaths(in->files);
  if (status.ok() && !options.local && options.host_key_policy != HostKeyPolicy::kOff) {
    status = CheckKnownHostsFile(options.known_hosts,
                                 options.host_key_policy == HostKeyPolicy::kAcceptNew);
  }
  if (status.ok() && !options.log_dir.empty()) status = CommandLog::Open(options.log_dir, &in->log);
  return status;
}

// The live progress line (none with --quiet); while it is up, log lines
// are printed above it.
std::unique_ptr<Progress> StartProgress(const Options& options) {
  if (options.quiet) return nullptr;
  auto progress = std::make_unique<Progress>(stderr, ProgressStyleFor(options, stderr));
  auto logger = std::make_shared<spdlog::logger>("fleetreap", MakeProgressLogSink(progress.get()));
  logger->set_pattern(kLogPattern);
  logger->set_level(spdlog::default_logger()->level());
  spdlog::set_default_logger(logger);
  return progress;
}

Status OpenJournal(const Options& options, const RunInputs& in, const FleetSettings& settings,
                   std::unique_ptr<Journal>* journal) {
  if (in.files.journal.empty()) return Status::Ok();
  std::vector<std::string> selected;
  for (const FleetPlan& plan : in.set.plans) selected.push_back(plan.host.name);
  RunReport header = RunHeaderFor(options, in.set.playbook_name, settings.scope);
  header.run_id = settings.audit.run_id;
  return Journal::Open(in.files.journal, header, selected, journal);
}

// The hosts cleaned, in waves when asked; "observer" sees each host.
RunReport CleanFleet(const Options& options, RunInputs* in, const FleetSettings& settings,
                     FleetObserver* observer) {
  const std::string host_key_warning = HostKeyPolicyWarning(options);
  if (!host_key_warning.empty()) spdlog::warn("{}", host_key_warning);
  const std::atomic<bool>* stop = InstallInterruptHandler();
  RaiseDescriptorLimit(static_cast<int>(
      std::min<size_t>(in->set.plans.size(), static_cast<size_t>(settings.forks))));
  // A dry run changes nothing: it prints the waves and inspects every host at once.
  if (options.dry_run && !in->waves.empty()) {
    std::fputs(DescribeWaves(options, in->set.plans, in->waves, in->cap).c_str(),
               HumanStream(in->files));
    in->waves.clear();
  }
  RunReport report = RunWaves(in->set.plans, in->waves, in->cap, settings,
                              MakeTransportFactory(options, in->log.get()), observer, stop,
                              RealClock(), CleanerFor(!options.no_redact));
  SetRunMetadata(options, in->set.playbook_name, &report);
  report.run_id = settings.audit.run_id;
  return report;
}

// From the outputs checked to the exit code: progress, scope, journal, the
// hosts, the reports.
int CleanAndReport(const Options& options, const Environment& env, RunInputs* in) {
  std::shared_ptr<spdlog::logger> plain_logger = spdlog::default_logger();
  std::unique_ptr<Progress> progress = StartProgress(options);
  FleetSettings settings = FleetSettingsFor(options);
  settings.audit = RunAuditFor(env);
  Status status = RunScopeFor(options, env, &settings.scope);
  if (!status.ok()) return ExitCodeForLoadError(status);
  if (!settings.scope.empty()) spdlog::info("scope: {}", DescribeScope(settings.scope));
  // The id each host's audit lines carry (docs/audit.md).
  spdlog::info("run {}", settings.audit.run_id);
  std::unique_ptr<Journal> journal;
  status = OpenJournal(options, *in, settings, &journal);
  if (!status.ok()) return FailUsage("--journal " + status.message());
  // The reports are made as hosts end; the runner drops each host's report
  // once they have it, unless a report still needs them whole.
  std::unique_ptr<ReportStream> stream;
  status = ReportStream::Open(in->files, in->set.playbook_name, settings.dry_run,
                              in->set.plans.size(), &stream);
  if (!status.ok()) return FailUsage(status.message());
  settings.keep_host_reports = ReportStream::NeedsWholeReports(in->files);
  StreamObserver stream_observer(stream.get(), in->set.plans);
  JournalObserver journal_observer(journal.get());
  HostLogObserver host_log(options.dry_run);
  ObserverList observers({journal ? &journal_observer : nullptr,
                          options.verbosity > 0 ? &host_log : nullptr, progress.get(),
                          &stream_observer});
  const RunReport report = CleanFleet(options, in, settings, &observers);
  if (journal) (void)journal->Ended(report.interrupted, report.stopped);
  spdlog::set_default_logger(plain_logger);
  progress.reset();
  const int code = FinishRun(report, stream.get(), in->files, options.color, options.verbosity > 0);
  // The journal stands in for the report until it is written: one that
  // defaulted to beside --json goes once the report is there.
  if (journal && options.journal.empty() && code != kExitSoftware) {
    journal.reset();
    std::remove(in->files.journal.c_str());
  }
  return code;
}

}  // namespace

int RunCommand(const Options& options, const Environment& env) {
  SetUpLogging(options);
  RunInputs in;
  Status status = BuildFleetPlans(FleetPlanRequestFor(options), &in.set);
  for (const std::string& warning : in.set.warnings) spdlog::warn("{}", warning);
  if (!status.ok()) return ExitCodeForLoadError(status);
  for (const std::string& note : in.set.notes) spdlog::info("{}", note);
  if (WantsWaves(options)) {
    std::string warning;
    status = WavePlanFor(options, in.set.plans, &in.waves, &in.cap, &warning);
    if (!status.ok()) return FailUsage(status.message());
    if (!warning.empty()) spdlog::warn("{}", warning);
  }
  if (options.list_hosts) return ListHosts(options, in);
  status = OpenOutputs(options, &in);
  if (!status.ok()) return FailUsage(status.message());
  return CleanAndReport(options, env, &in);
}

}  // namespace fleetreap
