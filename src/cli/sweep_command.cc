// SweepCommand (commands.h): `fleetreap sweep`, report-only rounds
// (sweep.h) until --rounds or a signal, the reports rewritten and one line
// logged each round.
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <string>
#include <utility>

#include "command_support.h"
#include "fleetreap/base/clock.h"
#include "fleetreap/base/exit_code.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/cli/commands.h"
#include "fleetreap/cli/run_identity.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/runner/sweep.h"
#include "fleetreap/transport/ssh_known_hosts.h"

namespace fleetreap {
namespace {

// One round: the inventory read again (from the second round on, so that
// hosts added since are swept), every host inspected, the reports
// rewritten. Returns the round's exit code.
int SweepRound(int round, const Options& options, const FleetSettings& settings,
               const TransportFactory& transports, const ReportFiles& files, FleetPlanSet* set) {
  if (round > 1) {
    FleetPlanSet again;
    Status loaded = BuildFleetPlans(FleetPlanRequestFor(options), &again);
    if (!loaded.ok()) {
      spdlog::error("sweep round {}: {} (the previous selection is swept)", round,
                    loaded.message());
    } else {
      *set = std::move(again);
    }
  }
  MakeInspectOnly(&set->plans);
  RunReport report = RunFleet(set->plans, settings, transports, nullptr, StopRequested(),
                              RealClock(), CleanerFor(!options.no_redact));
  SetRunMetadata(options, "inspect", &report);
  report.run_id = settings.audit.run_id;
  const Status written = WriteReports(report, files);
  TableStyle style;
  style.exit_code = false;  // the sweep exits 0; a dry run's code is not its own
  std::fprintf(stderr, "fleetreap: sweep round %d: %s\n", round,
               RenderVerdict(report, style).c_str());
  if (!written.ok()) std::fprintf(stderr, "fleetreap: %s\n", written.message().c_str());
  std::fflush(stderr);
  return written.ok() ? kExitClean : kExitSoftware;
}

}  // namespace

int SweepCommand(const Options& options, const Environment& env) {
  SetUpLogging(options);
  FleetPlanSet set;
  Status status = BuildFleetPlans(FleetPlanRequestFor(options), &set);
  for (const std::string& warning : set.warnings) spdlog::warn("{}", warning);
  if (!status.ok()) return ExitCodeForLoadError(status);
  const ReportFiles files = ReportFilesFor(options);
  status = CheckOutputPaths(files);
  if (status.ok() && !options.local && options.host_key_policy != HostKeyPolicy::kOff) {
    status = CheckKnownHostsFile(options.known_hosts,
                                 options.host_key_policy == HostKeyPolicy::kAcceptNew);
  }
  if (!status.ok()) return FailUsage(status.message());
  FleetSettings settings = FleetSettingsFor(options);
  status = RunScopeFor(options, env, &settings.scope);
  if (!status.ok()) return ExitCodeForLoadError(status);
  settings.dry_run = true;
  settings.audit = RunAuditFor(env);
  const TransportFactory transports = MakeTransportFactory(options, nullptr);
  const std::atomic<bool>* stop = InstallInterruptHandler();
  SweepSettings sweep;
  sweep.interval = options.sweep_interval;
  sweep.rounds = options.sweep_rounds;
  int code = kExitClean;
  std::fprintf(stderr, "fleetreap: sweep: every %s, %zu hosts, inspect only\n",
               FormatSeconds(sweep.interval).c_str(), set.plans.size());
  RunSweep(
      sweep,
      [&](int round) { code = SweepRound(round, options, settings, transports, files, &set); },
      stop, RealClock());
  return code;
}

}  // namespace fleetreap
