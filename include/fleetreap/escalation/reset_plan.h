// The GPU reset's plan (reset_ghosts): which GPUs may be reset, which
// daemons' units stop for it (NVIDIA's procedure, reset_stops_daemons), and
// why a GPU that needs a reset gets none. A reset is planned only on a view
// that saw every holder, and under a scope it never stops a daemon: one
// daemon serves every GPU of the host. Pure functions of the view;
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/escalation/host_view.h"

namespace fleetreap {

/// GPU indexes that are ghosts (kGhost) and that no present holder holds
/// (protected daemons included): the ones a reset may be tried on.
std::vector<int> ResettableGpus(const HostView& view);

/// The protected holders that block a reset: those holding a ghost or busy
/// GPU that no unprotected holder holds, as "nvidia-persistenced (pid 812)" joined with ", "; ""
/// when none. With "daemons_stoppable" (reset_stops_daemons), one that runs
/// in no unit reads "nvidia-persistenced (pid 812, no unit to stop)".
std::string ResetBlockers(const HostView& view, bool daemons_stoppable = false);

/// NVIDIA's reset procedure for GPUs that only protected daemons hold: the
/// ghost or busy GPUs whose present holders are all protected and each run
/// in a unit, and those units (each once, in the order first seen). A GPU
/// with a protected holder outside any unit, or with any other holder, is
/// left out.
struct DaemonReset {
  std::vector<int> gpus;
  std::vector<std::string> units;
};
DaemonReset DaemonResetPlan(const HostView& view);

/// What reset_ghosts does on "view": "gpus" to reset (ascending), "units" to
/// stop first and start again, and "refused": why a GPU that needs a reset
/// gets none, worded to follow "reset blocked by " ("" when none is refused).
/// Nothing is planned when the scan could not see every holder (a holder
/// walk that did not run, control-only holders left out): memory read as a
/// ghost may be a running job's. Under a scope ("view.scoped") no unit is
/// stopped: the daemons serve GPUs outside it; "refused" names the units
/// and the commands that would do the reset once the node is free. With
/// "daemons_stoppable" false no unit is stopped either, and "refused" names
/// the daemons (ResetBlockers).
struct ResetPlan {
  std::vector<int> gpus;
  std::vector<std::string> units;
  std::string refused;
};
ResetPlan PlanReset(const HostView& view, bool daemons_stoppable);

}  // namespace fleetreap
