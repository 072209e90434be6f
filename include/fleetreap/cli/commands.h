// Commands: the bodies of fleetreap's commands (a run, `fleetreap sweep`,
// `fleetreap merge`, and the answers that run nothing: --help, --version,
// --show-config, a usage error), each from parsed Options to its exit code
// (exit_code.h). main.cc parses the command line and calls one of these.
// Each writes to stdout, stderr and the report files, sets the process's
// logger, and installs the SIGINT/SIGTERM handler; call one per process,
// from one thread.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/cli/cli.h"
#include "fleetreap/cli/options.h"
#include "fleetreap/config/config_file.h"

namespace fleetreap {

/// A run: the plans built, the reports' paths checked before any host is
/// touched, the hosts cleaned (in waves when asked), the reports written.
/// With --list-hosts it prints the selection and touches nothing. Returns
/// the run's exit code (FinishRun), kExitUsage or kExitDataErr when the
/// inputs cannot be used. In run_command.cc.
int RunCommand(const Options& options, const Environment& env);

/// `fleetreap sweep`: report-only rounds (sweep.h) until --rounds or a
/// signal, the inventory read again and the reports rewritten each round,
/// one line on stderr per round. kExitClean once it ends, kExitSoftware when
/// the last round's reports could not be written. In sweep_command.cc.
int SweepCommand(const Options& options, const Environment& env);

/// `fleetreap merge`: the per-node reports joined (and checked against
/// --expect), then finished as a run. In merge_command.cc.
int MergeCommand(const Options& options);

/// The answer to an action that runs nothing ("cli.action" is kHelp,
/// kVersion, kUsageError or kShowConfig): the text on stdout or stderr and
/// its exit code; any other action is answered as kUsageError is. "argv"
/// picks the help text (merge's, sweep's or the run's); "defaults" and
/// "config_notes" are LoadDefaults'. In answer_command.cc.
int AnswerCommand(const CliResult& cli, int argc, const char* const* argv,
                  const std::vector<Setting>& defaults,
                  const std::vector<std::string>& config_notes);

}  // namespace fleetreap
