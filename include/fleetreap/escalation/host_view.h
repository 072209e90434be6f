// HostView: what a host looks like now (its tracked holders, GPU readings,
// active units, respawn watch), and the pure steps that host_fold.h's folds
// are made of: merging a holder scan into the tracked holders, numbering a
// lost GPU, and telling ghost memory under protected daemons from memory a
// process uses. No I/O, no clock; thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleetreap/escalation/protect.h"
#include "fleetreap/escalation/scope.h"
#include "fleetreap/escalation/unit_properties.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/process_tree.h"
#include "fleetreap/model/readiness.h"
#include "fleetreap/model/unit_properties.h"

namespace fleetreap {

/// A holder as the runner tracks it across scans. "holder.fate" is kept
/// current (kProtected set at first sight, kUnkillable after a failed KILL);
/// "holder.round" is the wave it belongs to (1 for the inspect scan).
struct TrackedHolder {
  Holder holder;
  bool present = true;  // seen in the latest scan or wait
  bool term_sent = false;
  bool kill_sent = false;
  uint64_t signalled_at = 0;  // host clock ticks at its first signal; 0: never
  /// Only nvidia-smi named it and, at a wave, it held no NVIDIA device file:
  /// never a target again (the host stays dirty while it is charged).
  bool unheld = false;
};

/// What the host looks like now.
struct HostView {
  std::vector<TrackedHolder> holders;
  std::vector<GpuReading> gpus;           // latest readings, classified
  std::vector<std::string> active_units;  // playbook units found active
  /// Children that a parent of a signalled holder started after the signal
  /// and that hold no GPU (yet): a restarted worker still importing PyTorch,
  /// or a job queue's next job. From the latest full scan.
  std::vector<ChildProcess> newcomers = {};
  std::vector<ChildProcess> parents = {};  // watched parents seen: pid, comm
  /// The watched parents alive at the latest full scan, described (user,
  /// exe, command line, owner with the unit's Restart=): each may start a
  /// signalled holder again. Empty when every one is gone.
  std::vector<Holder> restarters = {};
  /// What systemctl said of the holders' and parents' units and the
  /// playbook's (Restart=, RestartSec=, KillMode=, MainPID), by unit name,
  /// as of the latest full scan that read them.
  std::map<std::string, UnitProperties> units = {};
  /// Watched parents whose children the kernel could not list (no
  /// CONFIG_PROC_CHILDREN): the respawn watch is blind there. Every one
  /// seen in a full scan.
  std::vector<int> children_unlisted = {};
  /// Control-only holders the latest full scan left out past its cap (not
  /// described, never signalled): while any is there the host is not clean.
  int control_only_left_out = 0;
  /// The latest full scan's holder walk could not run: the host is not
  /// judged clean on it.
  bool holder_walk_failed = false;
  /// The readiness findings of the latest scan that read them
  /// (DecideReadiness), and whether one did.
  bool readiness_checked = false;
  std::vector<ReadinessFinding> readiness = {};
  /// The run has a scope (--gpus, --cgroup, --spare-pods, Slurm): /dev/shm
  /// segments cannot be told apart by name, so only those of the holders
  /// the run signalled may be removed (shm_scope.h), and a dry run lists none.
  bool scoped = false;
};

/// The fate of a signalled or watched holder that is no longer there:
/// kKilled after a KILL, kTerminated after a TERM, kGone when never signalled.
HolderFate FateAfterExit(const TrackedHolder& holder);

/// Folds one holder scan into "holders". A holder seen again (same PID and
/// start time) keeps its fate, protection and round and is present; a new one
/// gets round "waves" + 1 and is kProtected (with the reason) when "protect"
/// says so; one no longer seen is absent, with FateAfterExit as its fate
/// unless it is protected. A new holder that is not protected but lies
/// outside "scope" is kOutOfScope, with the reason in out_of_scope.
void MergeHolderScan(const std::vector<Holder>& scanned, const ProtectList& protect,
                     const Scope& scope, int waves, std::vector<TrackedHolder>* holders);

/// The playbook's active units that may be stopped; each other one goes to
/// "skipped" as "UNIT: reason": a unit whose name is protected
/// (unit_properties.h), whose cgroup holds fleetreap's own session
/// ("self_cgroup"), or which runs a protected holder (its main PID, or a
/// holder in its cgroup). Under a non-empty "scope" a unit is stopped only
/// when every process it runs is in scope: its cgroup lies inside --cgroup,
/// no holder in it is out of scope and at least one is in scope.
std::vector<std::string> UnitsSafeToStop(const std::vector<std::string>& active,
                                         const std::map<std::string, UnitProperties>& props,
                                         const std::string& self_cgroup,
                                         const std::vector<TrackedHolder>& holders,
                                         const Scope& scope, std::vector<std::string>* skipped);

/// nvidia-smi names a lost GPU by bus id only. When exactly one index below
/// "expected" has no reading and exactly one lost reading has no index, they
/// are the same GPU: gives the lost reading that index.
void NumberTheLostGpu(int expected, std::vector<GpuReading>* gpus);

/// Indexes of kBusy GPUs that no present unprotected holder holds: memory
/// that only protected daemons (which hold every GPU at 0 MiB) sit on.
std::vector<int> GpusHeldOnlyByProtected(const std::vector<TrackedHolder>& holders,
                                         const std::vector<GpuReading>& gpus);

/// Marks each GPU of "suspects" that no compute app uses (matched by UUID or
/// bus id) as kGhost, with a detail saying it needs a reset.
void MarkGhostsWithoutApps(const std::vector<int>& suspects, const std::vector<ComputeApp>& apps,
                           std::vector<GpuReading>* gpus);

/// True when the host still needs work: a GPU that is not clean or
/// protected_only, or a present holder that may still be signalled.
bool HostLooksDirty(const HostView& view);

/// The parent that keeps starting holders: the PPID (other than 0 and 1)
/// shared by a holder of a later wave and a signalled holder of an earlier
/// one, as "1234 (comm)" when its comm is known (from a tracked holder or
/// "parents", the watched parents a scan listed), else "1234"; "" when there
/// is none.
std::string RespawningParent(const std::vector<TrackedHolder>& holders,
                             const std::vector<ChildProcess>& parents = {});

/// "1234 (comm)" for process "pid" when a tracked holder or a listed parent
/// gives its comm, else "1234".
std::string ParentName(int pid, const std::vector<TrackedHolder>& holders,
                       const std::vector<ChildProcess>& parents);

/// The parents to watch for respawns: the PPIDs of signalled holders, other
/// than 0, 1 and any tracked holder, ascending and unique.
std::vector<int> WatchedParents(const std::vector<TrackedHolder>& holders);

/// The units that may start a signalled holder again on their own: the
/// unit of each signalled holder whose Restart= is set (owner.unit_restart),
/// once each, in the order first seen, but for those the playbook stopped
/// ("units_stopped": the stop step ran, and the unit is in active_units).
std::vector<std::string> RestartingUnits(const HostView& view, bool units_stopped);

/// The children of watched parents that started at or after the first
/// signal to a holder of that parent and that are not tracked holders.
std::vector<ChildProcess> FindNewcomers(const std::vector<ChildProcess>& children,
                                        const std::vector<TrackedHolder>& holders);

}  // namespace fleetreap
