// The /dev/shm step under a scope: which segments a run may remove when it
// acts on part of a host (--gpus, --cgroup, --spare-pods, Slurm). Another
// tenant's segments look like the job's by name, so names decide nothing:
// a segment is the run's when a holder it signalled held it (by inode, as
// the scan read it) and that holder's uid owns it. No I/O; thread-safe.
#pragma once

#include "fleetreap/escalation/host_view.h"
#include "fleetreap/escalation/playbook.h"
#include "fleetreap/model/shm_file.h"

namespace fleetreap {

/// Which /dev/shm candidates the clean step may remove on "view" (the step
/// itself still keeps every one that a live process holds). Without a scope:
/// all. Under a scope with shm_under_scope none: nothing ("all" false, the
/// list empty). With owned: each file that a holder this run sent TERM or
/// KILL to had open or mapped, whose owner (at the scan) is that holder's
/// uid, and that no holder it left alone (protected, out of scope, never
/// signalled) was seen holding; each inode once, ascending, with that uid.
ShmSelection ShmFilesToClean(const Playbook& playbook, const HostView& view);

}  // namespace fleetreap
