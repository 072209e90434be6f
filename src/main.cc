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
#include "fleetreap/cli/cli.h"
#include "fleetreap/cli/config_defaults.h"
#include "fleetreap/cli/host_listing.h"
#include "fleetreap/cli/progress.h"
#include "fleetreap/cli/run_observers.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/inventory/host_selection.h"
#include "fleetreap/report/journal.h"
#include "fleetreap/report/redaction.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_merge.h"
#include "fleetreap/report/terminal.h"
#include "fleetreap/transport/command_log.h"
#include "fleetreap/version.h"

namespace fleetreap {
namespace {

std::atomic<bool> g_stop_requested{false};
constexpr char kLogPattern[] = "fleetreap: %^%l%$: %v";

// First Ctrl-C: start no new host, let those in flight finish, write the
// reports. The handler is reset, so a second Ctrl-C ends the process.
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

std::string Lookup(const Environment& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

int Run(const Options& options, const Environment& env) {
  SetUpLogging(options);

  FleetPlanSet set;
  Status status = BuildFleetPlans(FleetPlanRequestFor(options), &set);
  for (const std::string& warning : set.warnings) spdlog::warn("{}", warning);
  if (!status.ok()) return ExitCodeForLoadError(status);

  for (const std::string& note : set.notes) spdlog::info("{}", note);
  if (options.list_hosts) {
    std::vector<Host> hosts;
    for (const FleetPlan& plan : set.plans) hosts.push_back(EffectiveHost(plan.host, options));
    std::string text = !options.json.empty()   ? FormatHostListJson(hosts)
                       : options.verbosity > 0 ? FormatHostListVerbose(hosts)
                                               : FormatHostList(hosts);
    return WriteHostListing(text, options.json) ? kExitClean : kExitUsage;
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
  // A Slurm prolog or epilog runs with the job's SLURM_JOB_ID and outside
  // any step; an srun task (a fleet-wide run) has a SLURM_STEP_ID and acts
  // on the whole node, or on --gpus / --cgroup.
  const std::string job_id =
      env.count("SLURM_STEP_ID") ? std::string() : Lookup(env, "SLURM_JOB_ID");
  status = ScopeFromOptions(options, job_id, Lookup(env, "SLURM_JOB_GPUS"), &settings.scope);
  if (!status.ok()) return ExitCodeForLoadError(status);
  if (!settings.scope.empty()) spdlog::info("scope: {}", DescribeScope(settings.scope));
  settings.tool_version = FLEETREAP_VERSION;
  settings.playbook_name = set.playbook_name;

  std::unique_ptr<Journal> journal;
  if (!files.journal.empty()) {
    std::vector<std::string> selected;
    for (const FleetPlan& plan : set.plans) selected.push_back(plan.host.name);
    status = Journal::Open(files.journal, RunHeaderFor(settings), selected, &journal);
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
  RunReport report =
      RunFleet(set.plans, settings, MakeTransportFactory(options, log.get()), &observers,
               &g_stop_requested, RealClock(), [redact](Transport& transport, const HostJob& job) {
                 HostReport host = CleanHost(transport, job);
                 if (redact) RedactHostReport(&host);
                 return host;
               });
  if (journal) (void)journal->Ended(report.interrupted);
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

// The process's environment, read once, as a value for everything below.
Environment ProcessEnvironment() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t eq = text.find('=');
    if (eq != std::string::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  return env;
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
      std::fputs((argc > 1 && std::string(argv[1]) == "merge" ? fleetreap::MergeHelpText()
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
    case CliAction::kMerge: break;
  }
  try {
    if (cli.action == CliAction::kMerge) return fleetreap::Merge(cli.options);
    return fleetreap::Run(cli.options, places.env);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetreap: internal error: %s\n", e.what());
    return fleetreap::kExitSoftware;
  }
}
