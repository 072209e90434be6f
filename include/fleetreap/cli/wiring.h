// Wiring: turns the command line's Options into the settings each library
// module takes (the fleet plan request, the fleet runner's settings, the SSH
// transport's options, the progress style, the report files), so that no
// module outside src/cli/ sees Options. main.cc calls these and connects the
// results. Pure apart from ProgressStyleFor (asks the stream about its
// terminal) and RaiseDescriptorLimit (a process-wide limit); thread-safe.
#pragma once

#include <cstdio>
#include <string>

#include "fleetreap/cli/options.h"
#include "fleetreap/cli/progress.h"
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
/// become, protect, the host key policy's name, "" under --local).
/// tool_version, playbook_name and scope are left to the caller.
FleetSettings FleetSettingsFor(const Options& options);

/// The options for reaching "host" under the command line "options": the
/// inventory's user and key file win over --user and --identity (as in
/// Ansible), and both keys are tried when both are given.
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

/// The run's fields as a report begins them (tool version, playbook, dry
/// run, host key policy, scope from "settings"; start time now), for the
/// journal's first line.
RunReport RunHeaderFor(const FleetSettings& settings);

/// Raises the process's soft RLIMIT_NOFILE (within the hard limit) so that
/// "hosts_in_flight" hosts fit: each holds a socket and, while resolving, a
/// thread. Call before RunFleet.
void RaiseDescriptorLimit(int hosts_in_flight);

}  // namespace fleetreap
