// Why a host's GPUs were held, and what may hold them again: the
// restarters still alive after the watch, each with the one command that
// stops it, and the cause of the holders, for the reports to say with the
// fix at its source (docs/playbooks.md). Pure functions of the view; no
// I/O, no clock; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "fleetreap/escalation/host_view.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/host_finding.h"

namespace fleetreap {

/// The one command that stops "process" and what runs it, never guessed:
/// "scancel 42" for a Slurm job's, "docker stop 3f2a9c1b7e4d" ("podman
/// stop") for such a container's, "systemctl stop vllm.service" for a
/// unit's, "" for a Kubernetes pod's (only its controller stops it for
/// good) or another runtime's, else "kill PID".
std::string StopCommandFor(const Holder& process);

/// One kRestarterAlive finding per watched parent still alive (view.
/// restarters, described, with StopCommandFor), then one per unit that
/// restarts a signalled holder on its own (RestartingUnits, "systemctl
/// stop UNIT", with its Restart= and RestartSec=). Empty when none.
std::vector<HostFinding> RestarterFindings(const HostView& view, bool units_stopped);

/// Why the host had holders: the cause most of its signalled or observed
/// holders share (protected and out-of-scope ones aside; "units_stopped":
/// the playbook's stop step ran on view.active_units), as a kCause
/// finding with "count" holders, the unit and its KillMode=, Restart=,
/// RestartSec= where one applies, the user and cgroup otherwise; a parent
/// that started holders again ("respawning_parent", described by the
/// matching one of "restarters" when it lives) outranks the rest. nullopt
/// when the host had no such holder.
std::optional<HostFinding> HolderCause(const HostView& view, bool units_stopped,
                                       const std::string& respawning_parent,
                                       const std::vector<HostFinding>& restarters);

}  // namespace fleetreap
