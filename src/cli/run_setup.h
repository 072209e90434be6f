// RunSetup: the one assembly of a run, shared by `fleetreap` (run_command.cc)
// and `fleetreap sweep` (sweep_command.cc), so that every run option means
// the same in both: the fleet settings with the scope and the run's audit
// identity (its run id), the transports with --log-dir, the journal's path,
// the stop flag and the run header; on the way it prints the scope and the
// run id (info), the --host-key-policy off warning, installs the interrupt
// handler and raises the descriptor limit. Part of the Commands module,
// internal to src/cli/. PrepareRun changes process-wide state (the signal
// handler, RLIMIT_NOFILE): call it from the main thread, once a run.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/cli/options.h"
#include "fleetreap/config/config_file.h"
#include "fleetreap/report/journal.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/runner/fleet_plan.h"
#include "fleetreap/runner/fleet_runner.h"
#include "fleetreap/transport/command_log.h"

namespace fleetreap {

/// A run as the command line asks for it. Move-only (it owns the command
/// log the transports write to); "transports" refers to the Options given to
/// PrepareRun and to "log", so both must outlive it.
struct PreparedRun {
  FleetSettings settings;                   // with the scope (RunScopeFor) and the audit (run id)
  std::unique_ptr<CommandLog> log;          // --log-dir; null without
  TransportFactory transports;              // MakeTransportFactory, through "log"
  std::string journal;                      // JournalPathFor; "" none
  const std::atomic<bool>* stop = nullptr;  // set by SIGINT, SIGTERM, SIGHUP
  RunReport header;  // version, playbook, key policy, run id, scope, dry run, start
};

/// The report files the options name, with the journal's path, checked
/// before any host is touched (CheckOutputPaths), and the known_hosts file
/// the host key policy will read or write (CheckKnownHostsFile; not under
/// --local or --host-key-policy off). kUsage with the one line to print.
[[nodiscard]] Status CheckRunOutputs(const Options& options, ReportFiles* files);

/// Assembles the run of the plans of "set" under "options" (and "env", for
/// the Slurm scope and the operator's name). An error is the one line to
/// print: kUsage for a --log-dir that cannot be opened or a Slurm GPU list
/// that cannot be read.
[[nodiscard]] Status PrepareRun(const Options& options, const Environment& env,
                                const FleetPlanSet& set, PreparedRun* run);

/// Opens the run's journal (none, "journal" stays null, when run.journal is
/// ""): run.header as its first line, with the hosts of "plans" selected.
[[nodiscard]] Status OpenRunJournal(const PreparedRun& run, const std::vector<FleetPlan>& plans,
                                    std::unique_ptr<Journal>* journal);

/// Copies the run header's fields that the runner does not know (version,
/// playbook, host key policy, run id) into "report".
void StampRun(const PreparedRun& run, RunReport* report);

/// Removes a journal that defaulted to beside --json once the report is
/// written ("code" not kExitSoftware): the report stands in for it.
void DropDefaultJournal(const Options& options, const PreparedRun& run, int code,
                        std::unique_ptr<Journal>* journal);

}  // namespace fleetreap
