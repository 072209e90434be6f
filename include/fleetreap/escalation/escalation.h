// Escalation: the pure decision of the cleanup ladder. Given a playbook, what
// the host looks like now (holders, GPU readings, active units) and what was
// already done (History), NextAction returns the one next thing to do. It
// reads no clock and does no I/O: host_cleaner.cc acts, updates the view and
// the history, and asks again until kDone. Pure functions; thread-safe.
//
// The ladder: inspect; stop the active units; SIGTERM every unprotected
// holder and wait term_grace; SIGKILL the survivors and wait kill_grace;
// re-scan settle_if_clean after the last signal, and when the host still
// looks dirty, again settle after it; holders the re-scan finds start a new
// wave, up to max_rounds waves; clean /dev/shm; verify; reset ghost GPUs.
//
// The settle period and speed: both waits are measured from the last signal,
// so they overlap the TERM wait (workers that take 1.5 s to exit have used
// up settle_if_clean, 500 ms by default, before the wait ends). The first
// re-scan comes then; when it finds every GPU clean and no holder left, the
// rest of "settle" (2 s) is skipped, unless a signalled holder's parent
// lives (ppid other than 1, so a supervisor may restart it): then the full
// settle applies. A process that opens a GPU later than that is a new job,
// which no cleanup can tell from a respawn. Holders it
// finds are signalled at once, as a new wave (the GPU 5 straggler); when it
// finds no holder but a GPU still over the threshold, the full settle
// applies before one more re-scan.
//
// Respawns: a supervisor may start a new worker the moment the old one dies,
// and that worker may take seconds (5 s for PyTorch on an H200) before it
// opens a GPU, long past any settle. So after a wave the re-scans also list
// the children of the signalled holders' parents; one started after the
// signals that holds no GPU yet is a newcomer, and while one is there the
// host is re-scanned every 500 ms, up to respawn_wait after the last signal.
// A newcomer that opens a GPU is a new wave's holder; one still waiting at
// the end leaves the host dirty.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/escalation/playbook.h"
#include "fleetreap/remote/remote_script_output.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/target.h"

namespace fleetreap {

/// A holder as the runner tracks it across scans. "holder.fate" is kept
/// current (kProtected set at first sight, kUnkillable after a failed KILL);
/// "holder.round" is the wave it belongs to (1 for the inspect scan).
struct TrackedHolder {
  Holder holder;
  bool present = true;    // seen in the latest scan or wait
  bool term_sent = false;
  bool kill_sent = false;
  uint64_t signalled_at = 0;  // host clock ticks at its first signal; 0: never
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
};

/// What was already done on the host.
struct History {
  bool inspected = false;
  bool units_done = false;
  int waves = 0;                  // signal waves started
  bool signalled_since_scan = false;
  int rescans_since_signal = 0;   // 1 after the quick re-scan, 2 after settle
  bool shm_done = false;
  bool verified = false;
  bool reset_done = false;
};

enum class ActionKind {
  kInspect,
  kStopUnits,
  kTerm,
  kKill,
  kRescan,
  kCleanShm,
  kVerify,
  kResetGpus,
  kDone,
};

/// "inspect", "stop_units", "term", "kill", "rescan", "clean_shm", "verify",
/// "reset_gpus", "done".
const char* ActionKindName(ActionKind kind);

struct Action {
  ActionKind kind = ActionKind::kDone;
  std::vector<Target> targets;       // kTerm, kKill: ascending PID
  std::vector<std::string> units;    // kStopUnits
  /// kTerm, kKill: how long to wait for the targets to exit.
  /// kRescan: how long after the last signal the scan may start.
  std::chrono::milliseconds wait{0};
  std::vector<int> gpus;             // kResetGpus: GPU indexes
};

/// The next action for a host. Never signals a holder whose fate is
/// kProtected or kUnkillable, nor one from a wave past max_rounds.
Action NextAction(const Playbook& playbook, const HostView& view,
                  const History& history);

/// The fate a dry run reports for "holder": kProtected, kWouldTerm,
/// kWouldKill (the playbook skips TERM), or kObserved (it signals nothing).
HolderFate PlannedFate(const Playbook& playbook, const Holder& holder);

/// The fate of a signalled or watched holder that is no longer there:
/// kKilled after a KILL, kTerminated after a TERM, kGone when never signalled.
HolderFate FateAfterExit(const TrackedHolder& holder);

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

/// The children of watched parents that started at or after the first
/// signal to a holder of that parent and that are not tracked holders.
std::vector<ChildProcess> FindNewcomers(const std::vector<ChildProcess>& children,
                                        const std::vector<TrackedHolder>& holders);

/// GPU indexes that are ghosts (kGhost) and that no present holder holds
/// (protected daemons included): the ones a reset may be tried on.
std::vector<int> ResettableGpus(const HostView& view);

/// The protected holders that block a reset: those holding a ghost or busy
/// GPU that no unprotected holder holds, as "nvidia-persistenced (pid 812)" joined with ", "; "" when none.
std::string ResetBlockers(const HostView& view);

}  // namespace fleetreap
