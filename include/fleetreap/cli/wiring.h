// Wiring: turns the command line's Options (and the process's environment,
// read once) into the settings each library module takes (the fleet plan
// request, the fleet runner's settings, the run's scope, each host's SSH
// options, the progress style, the report files and the report's metadata),
// so that no module outside src/cli/ sees Options. main.cc calls these and
// connects the results. Pure apart from ProcessEnvironment (reads environ),
// ProgressStyleFor (asks the stream about its terminal) and
// RaiseDescriptorLimit (a process-wide limit); thread-safe.
#pragma once

#include <cstdio>
#include <string>

#include "fleetreap/cli/options.h"
#include "fleetreap/cli/progress.h"
#include "fleetreap/config/config_file.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/report/report_files.h"
#include "fleetreap/runner/fleet_plan.h"
#include "fleetreap/runner/fleet_runner.h"
#include "fleetreap/transport/command_log.h"
#include "fleetreap/transport/ssh_transport.h"

namespace fleetreap {

/// The hosts and overrides the command line asks for: --local or --hosts
/// with --limit, --playbook, --become (and the command timeout for sinfo).
FleetPlanRequest FleetPlanRequestFor(const Options& options);

/// The settings the command line asks for (forks, timeouts, retries, dry run,
/// protect). The scope is RunScopeFor's; --become is the plans'
/// (BuildFleetPlans applies it to every host).
FleetSettings FleetSettingsFor(const Options& options);

/// The process's environment, read once: main passes it on as a value, so
/// that everything below it reads no global state.
Environment ProcessEnvironment();

/// The run's scope: the flags' (options.scope); without --gpus and --cgroup,
/// for --local in a Slurm prolog or epilog ("env" has SLURM_JOB_ID and no
/// SLURM_STEP_ID: an srun task acts on the whole node), that job and its
/// GPUs (SLURM_JOB_GPUS), Kubernetes pods spared on top with --spare-pods.
/// kUsage when SLURM_JOB_GPUS cannot be read.
[[nodiscard]] Status RunScopeFor(const Options& options, const Environment& env, Scope* scope);

/// How a run under "options" reaches "host", the one place a host's
/// connection settings are completed: the transport factory connects with
/// it and --list-hosts shows it (HostListingFor). The inventory's user and
/// key file win over --user and --identity (as in Ansible), and both keys are
/// tried, the inventory's first, when both are given.
SshTransportOptions SshOptionsFor(const Host& host, const Options& options);

/// The warning a run under "options" prints once, before any host: with
/// --host-key-policy off (and SSH) it says that no host is authenticated and
/// where the offered keys are recorded; "" otherwise.
std::string HostKeyPolicyWarning(const Options& options);

/// Makes each host's transport: LocalTransport under --local, else an
/// SshTransport with SshOptionsFor, wrapped by "log" when it is not null.
/// "options" and "log" must outlive the factory. Thread-safe.
TransportFactory MakeTransportFactory(const Options& options, const CommandLog* log);

/// The style for showing progress on "stream" (stderr, normally): live when
/// it is a terminal, cut to its width, coloured as ShouldUseColor decides
/// with --color, judged as a dry run with --dry-run. (--quiet means no
/// Progress at all; that is the caller's choice.)
ProgressStyle ProgressStyleFor(const Options& options, std::FILE* stream);

/// The report files --json, --junit, --summary-md, --failed-hosts and
/// --drain-reasons name.
ReportFiles ReportFilesFor(const Options& options);

/// The journal's path (--journal): the flag's FILE; "" for "none"; by
/// default "JSON.journal" beside a --json FILE (main removes that one once
/// the report is written), "" when --json is "-" or not given.
std::string JournalPathFor(const Options& options);

/// Sets the run's fields that the fleet runner does not know on "report":
/// this binary's version, "playbook_name" (FleetPlanSet's) and the host key
/// policy's name ("" under --local).
void SetRunMetadata(const Options& options, const std::string& playbook_name, RunReport* report);

/// The report as a run begins it, for the journal's first line:
/// SetRunMetadata's fields, the dry run, "scope" and the start time (now).
RunReport RunHeaderFor(const Options& options, const std::string& playbook_name,
                       const Scope& scope);

/// Raises the process's soft RLIMIT_NOFILE (within the hard limit) so that
/// "hosts_in_flight" hosts fit: each holds a socket and, while resolving, a
/// thread. Call before RunFleet.
void RaiseDescriptorLimit(int hosts_in_flight);

}  // namespace fleetreap
