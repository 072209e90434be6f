// fleetreap's entry point: parses flags and wires the modules together.
// Everything it calls is a module of its own; main only decides what goes
// where (stdout, stderr, files) and maps the outcome to an exit code.
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <exception>
#include <memory>

#include "fleetreap/cli.h"
#include "fleetreap/command_log.h"
#include "fleetreap/fleet_plan.h"
#include "fleetreap/fleet_runner.h"
#include "fleetreap/host_selection.h"
#include "fleetreap/local_transport.h"
#include "fleetreap/progress.h"
#include "fleetreap/report_files.h"
#include "fleetreap/report_table.h"
#include "fleetreap/ssh_transport.h"
#include "fleetreap/terminal.h"
#include "fleetreap/version.h"

namespace fleetreap {
namespace {

std::atomic<bool> g_stop_requested{false};

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
  auto logger = spdlog::stderr_color_mt("fleetreap");
  logger->set_pattern("fleetreap: %^%l%$: %v");
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

TransportFactory MakeTransportFactory(const Options& options, const CommandLog* log) {
  return [&options, log](const Host& host) -> std::unique_ptr<Transport> {
    std::unique_ptr<Transport> transport;
    if (options.local) {
      transport = std::make_unique<LocalTransport>();
    } else {
      transport = std::make_unique<SshTransport>(SshOptionsFor(host, options));
    }
    if (log != nullptr) transport = log->Wrap(host.name, std::move(transport));
    return transport;
  };
}

int Run(const Options& options) {
  SetUpLogging(options);

  FleetPlanSet set;
  Status status = BuildFleetPlans(options, &set);
  for (const std::string& warning : set.warnings) spdlog::warn("{}", warning);
  if (!status.ok()) return ExitCodeForLoadError(status);

  if (options.list_hosts) {
    std::vector<Host> hosts;
    for (const FleetPlan& plan : set.plans) hosts.push_back(plan.host);
    std::fputs(FormatHostList(hosts).c_str(), stdout);
    return kExitClean;
  }

  std::unique_ptr<CommandLog> log;
  if (!options.log_dir.empty()) {
    status = CommandLog::Open(options.log_dir, &log);
    if (!status.ok()) {
      std::fprintf(stderr, "fleetreap: %s\n", status.message().c_str());
      return kExitUsage;
    }
  }

  // Machine output owns stdout when --json - asks for it; people get stderr.
  const bool json_on_stdout = options.json == "-";
  std::FILE* human = json_on_stdout ? stderr : stdout;

  ProgressStyle style;
  style.live = !options.quiet && IsTerminal(stderr);
  style.color = ShouldUseColorFor(stderr, options.color);
  style.dry_run = options.dry_run;
  style.width = TerminalWidth(stderr);
  // The tick also notices Ctrl-C off a terminal, to say so in the CI log.
  style.tick = std::chrono::milliseconds(250);
  std::unique_ptr<Progress> progress;
  if (!options.quiet) {
    progress = std::make_unique<Progress>(stderr, style);
    progress->WatchStopFlag(&g_stop_requested);
  }

  FleetSettings settings = FleetSettingsFor(options);
  settings.tool_version = FLEETREAP_VERSION;
  settings.playbook_name = set.playbook_name;

  InstallInterruptHandler();
  RunReport report = RunFleet(set.plans, settings, MakeTransportFactory(options, log.get()),
                              progress.get(), &g_stop_requested);
  progress.reset();

  TableStyle table_style;
  table_style.color = ShouldUseColorFor(human, options.color);
  std::fputs(RenderTable(report, table_style).c_str(), human);
  std::fflush(human);

  status = WriteReports(report, options);
  if (!status.ok()) {
    spdlog::error("{}", status.message());
    return kExitSoftware;
  }
  return ExitCodeFor(report);
}

}  // namespace
}  // namespace fleetreap

int main(int argc, char** argv) {
  using fleetreap::CliAction;
  const fleetreap::CliResult cli = fleetreap::ParseCommandLine(argc, argv);
  switch (cli.action) {
    case CliAction::kHelp:
      std::fputs(fleetreap::HelpText().c_str(), stdout);
      return fleetreap::kExitClean;
    case CliAction::kVersion:
      std::printf("fleetreap %s\n", FLEETREAP_VERSION);
      return fleetreap::kExitClean;
    case CliAction::kUsageError:
      std::fprintf(stderr, "fleetreap: %s\nTry 'fleetreap --help' for more information.\n",
                   cli.error.c_str());
      return fleetreap::kExitUsage;
    case CliAction::kRun:
      break;
  }
  try {
    return fleetreap::Run(cli.options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fleetreap: internal error: %s\n", e.what());
    return fleetreap::kExitSoftware;
  }
}
