// fleetreap's entry point: parses flags and wires the modules together.
// Everything it calls is a module of its own; main only decides what goes
// where (stdout, stderr, files) and maps the outcome to an exit code.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/base/clock.h"
#include "fleetreap/base/exit_code.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/cli/cli.h"
#include "fleetreap/cli/config_defaults.h"
#include "fleetreap/cli/host_listing.h"
#include "fleetreap/cli/progress.h"
#include "fleetreap/cli/run_observers.h"
#include "fleetreap/cli/wave_flags.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/escalation/scope.h"
#include "fleetreap/report/journal.h"
#include "fleetreap/report/redaction.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_merge.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/report/terminal.h"
#include "fleetreap/runner/sweep.h"
#include "fleetreap/runner/wave_runner.h"
#include "fleetreap/transport/command_log.h"

namespace fleetreap {
namespace {

std::atomic<bool> g_stop_requested{false};
constexpr char kLogPattern[] = "fleetreap: %^%l%$: %v";

// First Ctrl-C: start no new host, stop those in flight at their next step
// boundary, write the reports. The handler is reset, so a second Ctrl-C
// ends the process.
void OnInterrupt(int) { g_stop_requested.store(true); }

void InstallInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = OnInterrupt;
  action.sa_flags = SA_RESETHAND;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

void SetUpLogging(const Options& options) {
  // The level's colour follows --color and NO_COLOR as the report's does.
  auto logger = spdlog::stderr_color_mt("fleetreap", ShouldUseColorFor(stderr, options.color)
                                                         ? spdlog::color_mode::always
                                                         : spdlog::color_mode::never);
  logger->set_pattern(kLogPattern);
  spdlog::level::level_enum level = spdlog::level::warn;
  if (options.quiet) level = spdlog::level::err;
  if (options.verbosity == 1) level = spdlog::level::info;
  if (options.verbosity >= 2) level = spdlog::level::debug;
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

int ExitCodeForLoadError(const Status& status) {
  std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
  return status.kind() == ErrorKind::kUsage ? kExitUsage : kExitDataErr;
}

int Run(const Options& options, const Environment& env) {
  SetUpLogging(options);

  FleetPlanSet set;
  Status status = BuildFleetPlans(FleetPlanRequestFor(options), &set);
  for (const std::string& warning : set.warnings) spdlog::warn("{}", warning);
  if (!status.ok()) return ExitCodeForLoadError(status);

  for (const std::string& note : set.notes) spdlog::info("{}", note);
  std::vector<Wave> waves;
  FailCap cap;
  if (WantsWaves(options)) WavePlanFor(options, set.plans, &waves, &cap);
  if (options.list_hosts && WantsWaves(options) && options.json.empty()) {
    return WriteHostListing(DescribeWaves(options, set.plans, waves, cap), "") ? kExitClean
                                                                               : kExitUsage;
  }
  if (options.list_hosts) {
    return WriteHostListing(HostListingFor(set, options), options.json) ? kExitClean : kExitUsage;
  }

  // Every output is checked before any host is touched: a bad path costs
  // nothing but this message.
  ReportFiles files = ReportFilesFor(options);
  files.journal = JournalPathFor(options);
  status = CheckOutputPaths(files);
  if (!status.ok()) {
    std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
    return kExitUsage;
  }

  std::unique_ptr<CommandLog> log;
  if (!options.log_dir.empty()) {
    status = CommandLog::Open(options.log_dir, &log);
    if (!status.ok()) {
      std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
      return kExitUsage;
    }
  }

  std::unique_ptr<Progress> progress;
  std::shared_ptr<spdlog::logger> plain_logger = spdlog::default_logger();
  if (!options.quiet) {
    progress = std::make_unique<Progress>(stderr, ProgressStyleFor(options, stderr));
    // While the live line is up, log lines are printed above it.
    auto logger =
        std::make_shared<spdlog::logger>("fleetreap", MakeProgressLogSink(progress.get()));
    logger->set_pattern(kLogPattern);
    logger->set_level(plain_logger->level());
    spdlog::set_default_logger(logger);
  }

  FleetSettings settings = FleetSettingsFor(options);
  status = RunScopeFor(options, env, &settings.scope);
  if (!status.ok()) return ExitCodeForLoadError(status);
  if (!settings.scope.empty()) spdlog::info("scope: {}", DescribeScope(settings.scope));

  std::unique_ptr<Journal> journal;
  if (!files.journal.empty()) {
    std::vector<std::string> selected;
    for (const FleetPlan& plan : set.plans) selected.push_back(plan.host.name);
    status = Journal::Open(files.journal, RunHeaderFor(options, set.playbook_name, settings.scope),
                           selected, &journal);
    if (!status.ok()) {
      std::fprintf(stderr, "fleetreap: --journal %s\n", status.message().c_str());
      return kExitUsage;
    }
  }
  JournalObserver journal_observer(journal.get());
  HostLogObserver host_log(options.dry_run);
  ObserverList observers({journal ? &journal_observer : nullptr,
                          options.verbosity > 0 ? &host_log : nullptr, progress.get()});

  const std::string host_key_warning = HostKeyPolicyWarning(options);
  if (!host_key_warning.empty()) spdlog::warn("{}", host_key_warning);
  InstallInterruptHandler();
  RaiseDescriptorLimit(
      static_cast<int>(std::min<size_t>(set.plans.size(), static_cast<size_t>(settings.forks))));
  const bool redact = !options.no_redact;
  // A dry run changes nothing: it prints the waves and inspects every host at once.
  if (options.dry_run && !waves.empty()) {
    std::fputs(DescribeWaves(options, set.plans, waves, cap).c_str(), HumanStream(files));
    waves.clear();
  }
  RunReport report = RunWaves(
      set.plans, waves, cap, settings, MakeTransportFactory(options, log.get()), &observers,
      &g_stop_requested, RealClock(), [redact](Transport& transport, const HostJob& job) {
        HostReport host = CleanHost(transport, job);
        if (redact) RedactHostReport(&host);
        return host;
      });
  SetRunMetadata(options, set.playbook_name, &report);
  if (journal) (void)journal->Ended(report.interrupted, report.stopped);
  spdlog::set_default_logger(plain_logger);
  progress.reset();
  const int code = FinishRun(report, files, options.color, options.verbosity > 0);
  // The journal stands in for the report until it is written: one that
  // defaulted to beside --json goes once the report is there.
  if (journal && options.journal.empty() && code != kExitSoftware) {
    journal.reset();
    std::remove(files.journal.c_str());
  }
  return code;
}

// fleetreap sweep: report-only rounds (sweep.h) until --rounds or a signal,
// the reports rewritten and one line logged each round.
int Sweep(const Options& options, const Environment& env) {
  SetUpLogging(options);
  FleetPlanSet set;
  Status status = BuildFleetPlans(FleetPlanRequestFor(options), &set);
  for (const std::string& warning : set.warnings) spdlog::warn("{}", warning);
  if (!status.ok()) return ExitCodeForLoadError(status);
  const ReportFiles files = ReportFilesFor(options);
  status = CheckOutputPaths(files);
  if (!status.ok()) {
    std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
    return kExitUsage;
  }
  FleetSettings settings = FleetSettingsFor(options);
  status = RunScopeFor(options, env, &settings.scope);
  if (!status.ok()) return ExitCodeForLoadError(status);
  settings.dry_run = true;
  const TransportFactory transports = MakeTransportFactory(options, nullptr);
  const bool redact = !options.no_redact;
  InstallInterruptHandler();
  SweepSettings sweep;
  sweep.interval = options.sweep_interval;
  sweep.rounds = options.sweep_rounds;
  int code = kExitClean;
  std::fprintf(stderr, "fleetreap: sweep: every %s, %zu hosts, inspect only\n",
               FormatSeconds(sweep.interval).c_str(), set.plans.size());
  RunSweep(
      sweep,
      [&](int round) {
        // The inventory is read again each round: hosts added since are swept.
        if (round > 1) {
          FleetPlanSet again;
          Status loaded = BuildFleetPlans(FleetPlanRequestFor(options), &again);
          if (!loaded.ok()) {
            spdlog::error("sweep round {}: {} (the previous selection is swept)", round,
                          loaded.message());
          } else {
            set = std::move(again);
          }
        }
        MakeInspectOnly(&set.plans);
        RunReport report =
            RunFleet(set.plans, settings, transports, nullptr, &g_stop_requested, RealClock(),
                     [redact](Transport& transport, const HostJob& job) {
                       HostReport host = CleanHost(transport, job);
                       if (redact) RedactHostReport(&host);
                       return host;
                     });
        SetRunMetadata(options, "inspect", &report);
        const Status written = WriteReports(report, files);
        code = written.ok() ? kExitClean : kExitSoftware;
        std::fprintf(stderr, "fleetreap: sweep round %d: %s\n", round,
                     RenderVerdict(report, TableStyle()).c_str());
        if (!written.ok()) std::fprintf(stderr, "fleetreap: %s\n", written.message().c_str());
        std::fflush(stderr);
      },
      &g_stop_requested, RealClock());
  return code;
}

// fleetreap merge: the per-node reports joined, then finished as a run.
int Merge(const Options& options) {
  const ReportFiles files = ReportFilesFor(options);
  Status status = CheckOutputPaths(files);
  if (!status.ok()) {
    std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
    return kExitUsage;
  }
  RunReport report;
  std::vector<std::string> expected;
  if (!options.merge_expect.empty()) status = ReadExpectedHosts(options.merge_expect, &expected);
  if (status.ok()) status = MergeReportFiles(options.merge_reports, &report, expected);
  if (status.ok()) ExpectHosts(expected, &report);
  if (!status.ok()) return ExitCodeForLoadError(status);
  return FinishRun(report, files, options.color, options.verbosity > 0);
}

}  // namespace
}  // namespace fleetreap

int main(int argc, char** argv) {
  using fleetreap::CliAction;
  fleetreap::ConfigPlaces places;
  places.env = fleetreap::ProcessEnvironment();
  char cwd[4096] = {};
  if (getcwd(cwd, sizeof cwd - 1) != nullptr) places.cwd = cwd;
  std::vector<fleetreap::Setting> defaults;
  std::vector<std::string> config_notes;
  const fleetreap::Status config = fleetreap::LoadDefaults(places, &defaults, &config_notes);
  const fleetreap::CliResult cli = fleetreap::ParseCommandLineWithDefaults(
      argc, argv, config.ok() ? defaults : std::vector<fleetreap::Setting>());
  // A broken default stops a run, not --help, --version or merge.
  if (!config.ok() && cli.action != CliAction::kHelp && cli.action != CliAction::kVersion &&
      cli.action != CliAction::kMerge) {
    std::fprintf(stderr, "fleetreap: %s\n", config.message().c_str());
    return fleetreap::kExitConfig;
  }
  switch (cli.action) {
    case CliAction::kHelp:
      std::fputs((argc > 1 && std::string(argv[1]) == "merge"   ? fleetreap::MergeHelpText()
                  : argc > 1 && std::string(argv[1]) == "sweep" ? fleetreap::SweepHelpText()
                                                                : fleetreap::HelpText())
                     .c_str(),
                 stdout);
      return fleetreap::kExitClean;
    case CliAction::kVersion:
      std::fputs(fleetreap::VersionText().c_str(), stdout);
      return fleetreap::kExitClean;
    case CliAction::kUsageError:
      std::fprintf(stderr, "fleetreap: %s\nTry 'fleetreap --help' for more information.\n",
                   cli.error.c_str());
      return fleetreap::kExitUsage;
    case CliAction::kShowConfig:
      for (const std::string& note : config_notes) {
        std::fprintf(stderr, "fleetreap: %s\n", note.c_str());
      }
      std::fputs(fleetreap::FormatShowConfig(argc, argv, defaults).c_str(), stdout);
      return fleetreap::kExitClean;
    case CliAction::kRun:
    case CliAction::kMerge:
    case CliAction::kSweep: break;
  }
  try {
    if (cli.action == CliAction::kMerge) return fleetreap::Merge(cli.options);
    if (cli.action == CliAction::kSweep) return fleetreap::Sweep(cli.options, places.env);
    return fleetreap::Run(cli.options, places.env);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetreap: internal error: %s\n", e.what());
    return fleetreap::kExitSoftware;
  }
}
