// SweepCommand (commands.h): `fleetreap sweep`, report-only rounds
// (sweep.h) until --rounds or a signal, the reports rewritten and one line
// logged each round. The run is assembled as `fleetreap`'s is (run_setup.h):
// --log-dir, --journal, the run id, the host-key warning and the descriptor
// limit mean the same here.
#include <spdlog/spdlog.h>

#include <atomic>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>

#include "command_support.h"
#include "fleetreap/base/clock.h"
#include "fleetreap/base/exit_code.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/cli/commands.h"
#include "fleetreap/cli/run_observers.h"
#include "fleetreap/cli/wiring.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/report/report_table.h"
#include "fleetreap/runner/sweep.h"
#include "run_setup.h"

namespace fleetreap {
namespace {

// The selection for round "round": the inventory read again from the
// second round on, so that hosts added since are swept; on an error the
// previous selection is kept.
void ReloadSelection(int round, const Options& options, FleetPlanSet* set) {
  if (round == 1) return;
  FleetPlanSet again;
  Status loaded = BuildFleetPlans(FleetPlanRequestFor(options), &again);
  if (!loaded.ok()) {
    spdlog::error("sweep round {}: {} (the previous selection is swept)", round, loaded.message());
  } else {
    *set = std::move(again);
  }
}

// The hosts of "plans" inspected once, each recorded in the round's
// journal (when the run has one).
RunReport InspectFleet(const Options& options, const PreparedRun& run,
                       const std::vector<FleetPlan>& plans) {
  std::unique_ptr<Journal> journal;
  Status opened = OpenRunJournal(run, plans, &journal);
  if (!opened.ok()) spdlog::error("--journal {}", opened.message());
  JournalObserver journal_observer(journal.get());
  RunReport report =
      RunFleet(plans, run.settings, run.transports, journal ? &journal_observer : nullptr, run.stop,
               RealClock(), CleanerFor(!options.no_redact));
  if (journal) (void)journal->Ended(report.interrupted, report.stopped);
  StampRun(run, &report);
  return report;
}

// One round: the selection, every host inspected, the reports rewritten.
// Returns the round's exit code.
int SweepRound(int round, const Options& options, const PreparedRun& run, const ReportFiles& files,
               FleetPlanSet* set) {
  ReloadSelection(round, options, set);
  MakeInspectOnly(&set->plans);
  const RunReport report = InspectFleet(options, run, set->plans);
  const Status written = WriteReports(report, files);
  TableStyle style;
  style.exit_code = false;  // the sweep exits 0; a dry run's code is not its own
  std::fprintf(stderr, "fleetreap: sweep round %d: %s\n", round,
               RenderVerdict(report, style).c_str());
  if (!written.ok()) std::fprintf(stderr, "fleetreap: %s\n", written.message().c_str());
  std::fflush(stderr);
  if (written.ok() && options.journal.empty() && !run.journal.empty()) {
    std::remove(run.journal.c_str());  // the report stands in for it
  }
  return written.ok() ? kExitClean : kExitSoftware;
}

}  // namespace

int SweepCommand(const Options& options, const Environment& env) {
  SetUpLogging(options);
  FleetPlanSet set;
  Status status = BuildFleetPlans(FleetPlanRequestFor(options), &set);
  for (const std::string& warning : set.warnings) spdlog::warn("{}", warning);
  if (!status.ok()) return ExitCodeForLoadError(status);
  ReportFiles files;
  status = CheckRunOutputs(options, &files);
  if (!status.ok()) return FailUsage(status.message());
  PreparedRun run;
  status = PrepareRun(options, env, set, &run);
  if (!status.ok()) return ExitCodeForLoadError(status);
  run.header.playbook = "inspect";  // every plan is made inspect-only
  SweepSettings sweep;
  sweep.interval = options.sweep_interval;
  sweep.rounds = options.sweep_rounds;
  int code = kExitClean;
  std::fprintf(stderr, "fleetreap: sweep: every %s, %zu hosts, inspect only\n",
               FormatSeconds(sweep.interval).c_str(), set.plans.size());
  RunSweep(
      sweep, [&](int round) { code = SweepRound(round, options, run, files, &set); }, run.stop,
      RealClock());
  return code;
}

}  // namespace fleetreap
