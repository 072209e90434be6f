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
#include "fleetreap/cli/run_observers.h"
#include "fleetreap/cli/wave_flags.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/report/journal.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_stream.h"
#include "fleetreap/runner/wave_runner.h"
#include "run_setup.h"

namespace fleetreap {
namespace {

// The plans, their waves and where the run writes.
struct RunInputs {
  FleetPlanSet set;
  std::vector<Wave> waves;
  FailCap cap;
  ReportFiles files;
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
Status CheckOutputs(const Options& options, RunInputs* in) {
  return CheckRunOutputs(options, &in->files);
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

// The hosts cleaned, in waves when asked; "observer" sees each host.
RunReport CleanFleet(const Options& options, RunInputs* in, const PreparedRun& run,
                     FleetObserver* observer) {
  // A dry run changes nothing: it prints the waves and inspects every host at once.
  if (options.dry_run && !in->waves.empty()) {
    std::fputs(DescribeWaves(options, in->set.plans, in->waves, in->cap).c_str(),
               HumanStream(in->files));
    in->waves.clear();
  }
  RunReport report = RunWaves(in->set.plans, in->waves, in->cap, run.settings, run.transports,
                              observer, run.stop, RealClock(), CleanerFor(!options.no_redact));
  StampRun(run, &report);
  return report;
}

// The observers of a run: the journal, the -v host lines, the progress
// line and the report stream, each when there is one.
struct RunObservers {
  RunObservers(const Options& options, Journal* journal, Progress* progress, ReportStream* stream,
               const std::vector<FleetPlan>& plans)
      : stream_observer(stream, plans),
        journal_observer(journal),
        host_log(options.dry_run),
        all({journal ? &journal_observer : nullptr, options.verbosity > 0 ? &host_log : nullptr,
             progress, &stream_observer}) {}
  StreamObserver stream_observer;
  JournalObserver journal_observer;
  HostLogObserver host_log;
  ObserverList all;
};

// The run's report stream: the reports are made as hosts end; the runner
// drops each host's report once they have it.
Status OpenStream(const RunInputs& in, PreparedRun* run, std::unique_ptr<ReportStream>* stream) {
  run->settings.keep_host_reports = false;
  return ReportStream::Open(in.files, in.set.playbook_name, run->settings.dry_run,
                            in.set.plans.size(), stream);
}

// From the outputs checked to the exit code: progress, the run's assembly,
// journal, the hosts, the reports.
int CleanAndReport(const Options& options, const Environment& env, RunInputs* in) {
  std::shared_ptr<spdlog::logger> plain_logger = spdlog::default_logger();
  std::unique_ptr<Progress> progress = StartProgress(options);
  PreparedRun run;
  Status status = PrepareRun(options, env, in->set, &run);
  if (!status.ok()) return ExitCodeForLoadError(status);
  std::unique_ptr<Journal> journal;
  status = OpenRunJournal(run, in->set.plans, &journal);
  if (!status.ok()) return FailUsage("--journal " + status.message());
  std::unique_ptr<ReportStream> stream;
  status = OpenStream(*in, &run, &stream);
  if (!status.ok()) return FailUsage(status.message());
  RunObservers observers(options, journal.get(), progress.get(), stream.get(), in->set.plans);
  const RunReport report = CleanFleet(options, in, run, &observers.all);
  if (journal) (void)journal->Ended(report.interrupted, report.stopped);
  spdlog::set_default_logger(plain_logger);
  progress.reset();
  const int code = FinishRun(report, stream.get(), in->files, options.color, options.verbosity > 0);
  // The journal stands in for the report until it is written.
  DropDefaultJournal(options, run, code, &journal);
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
  status = CheckOutputs(options, &in);
  if (!status.ok()) return FailUsage(status.message());
  return CleanAndReport(options, env, &in);
}

}  // namespace fleetreap
