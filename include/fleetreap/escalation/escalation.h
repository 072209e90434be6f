// Escalation: the plan of one host's cleanup, in the style of ninja's Plan.
// The runner (host_cleaner.cc) asks Next for the one next action, runs its
// steps (ActionSteps: the action, then those riding along) in one round
// trip, and reads their replies in order: for each step it asks StepCounts,
// folds what the host replied into the HostView with host_fold.h's pure
// folds, and reports it with FinishedStep, which alone changes the History.
// Next reads no clock and does no I/O. NextAction is the ladder rule that
// Next applies, given a History, RideAlong the rule of which steps ride along
// with it in one round trip, and HoldersSettled the predicate both the
// ladder and the bookkeeping read (ladder.cc). Pure functions are
// thread-safe; an Escalation belongs to one host's run and one thread.
//
// Every decision of the run is made here: the ladder below, the dry run's
// cut after inspect, quick or full re-scans, which steps ride along in one
// round trip (Action::fused, RideAlong), the end after a lost GPU or a missing driver,
// and a cap: after kMaxSteps actions, a ladder that still wants to act
// returns kDidNotConverge, which the runner reports as a dirty host with
// the error message "the escalation did not converge after 64 steps".
//
// The ladder: inspect; stop the active units; SIGTERM every unprotected
// holder and wait term_grace; SIGKILL the survivors and wait kill_grace;
// re-scan settle_if_clean after the last signal (at once when nothing can
// restart a signalled holder: no live parent, no unit with Restart=), and
// when the host still looks dirty, again settle after it; holders the
// re-scan finds start a new wave, up to max_rounds waves; clean /dev/shm;
// verify; reset ghost GPUs.
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
// Respawns: a supervisor may start a new worker the moment the old one dies
// or seconds later (supervisord's backoff, RestartSec=5s, a pod's
// CrashLoopBackOff), and that worker may take seconds (5 s for PyTorch on
// an H200) before it opens a GPU, long past any settle. So after a wave
// the re-scans also list the children of the signalled holders' parents;
// while such a parent lives (a restarter), a signalled holder's unit may
// restart it (Restart=, not stopped by the playbook), or a newcomer (a
// child started after the signals that holds no GPU yet) is there, the
// host is re-scanned, less often as time goes on (WatchWait), up to
// respawn_wait after the last signal. A newcomer that opens a GPU is a new
// wave's holder; one still waiting at the end leaves the host dirty.
// Orphans (parent init) take the fast path: nothing is watched.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/escalation/host_view.h"
#include "fleetreap/escalation/playbook.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/shm_file.h"
#include "fleetreap/model/target.h"

namespace fleetreap {

/// What was already done on the host.
struct History {
  bool inspected = false;
  bool units_done = false;
  int waves = 0;  // signal waves started
  bool signalled_since_scan = false;
  int rescans_since_signal = 0;  // 1 after the quick re-scan, 2 after settle
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
  kDidNotConverge,  // kMaxSteps actions ran and the ladder still wants more
};

/// "inspect", "stop_units", "term", "kill", "rescan", "clean_shm", "verify",
/// "reset_gpus", "done", "did_not_converge".
const char* ActionKindName(ActionKind kind);

struct Action {
  ActionKind kind = ActionKind::kDone;
  std::vector<Target> targets;     // kTerm, kKill: ascending PID
  std::vector<std::string> units;  // kStopUnits; kResetGpus: to stop, then start again
  /// kTerm, kKill: how long to wait for the targets to exit.
  /// kRescan: how long after the last signal the scan may start.
  std::chrono::milliseconds wait{0};
  std::vector<int> gpus;  // kResetGpus: GPU indexes
  /// kRescan, kVerify: nvidia-smi first, the known holders standing in; a
  /// full scan follows only when it finds a GPU that is not clean
  /// (HostGpusClean). False: the device files are read again too.
  bool quick = false;
  /// kInspect: list the /dev/shm leftovers in the same round trip;
  /// kCleanShm: list them, remove nothing. Dry runs only.
  bool dry_run = false;
  /// kCleanShm: which leftovers it may remove (shm_scope.h: under a scope,
  /// the segments of the holders this run signalled).
  ShmSelection shm;
  /// The actions that ride along in the same round trip, in the order they
  /// run after this one (ActionSteps): kStopUnits + the TERM or KILL wave on
  /// the holders the inspect found; kCleanShm + kVerify; the first kRescan
  /// after a wave + kCleanShm, and + kVerify when the re-scan is a full one
  /// (a quick re-scan read every GPU and is the verify itself: the clean
  /// after it touches none); a wave + that quick kRescan (+ kCleanShm) where
  /// nothing can restart the targets. Those on a re-scan, and a re-scan on a
  /// wave, count only when the ladder comes to them; see
  /// Escalation::StepCounts.
  std::vector<Action> fused;
};

/// The steps of "action" in the order they run on the host, in one round
/// trip, and are reported to the Escalation: the action itself (without its
/// fused list), then each action of Action::fused.
std::vector<Action> ActionSteps(const Action& action);

/// The name a step's timing carries: the kind's name, then each fused
/// action's joined by "+": "rescan", "stop_units+term", "rescan+clean_shm",
/// "rescan+clean_shm+verify".
std::string StepName(const Action& action);

/// What an action found that the HostView does not say.
struct StepResult {
  /// kInspect: nvidia-smi says the driver is not loaded or a GPU is lost:
  /// nothing may be signalled or removed, the ladder ends.
  bool ladder_stopped = false;
};

enum class EscalationMode { kRun, kDryRun };

/// One host's plan. Holds a reference to "playbook", which must outlive it.
class Escalation {
 public:
  /// Actions a host may take before the ladder is called stuck.
  static constexpr int kMaxSteps = 64;

  Escalation(const Playbook& playbook, EscalationMode mode) : playbook_(playbook), mode_(mode) {}

  /// The next action for "view": NextAction, except that a dry run ends
  /// after inspect (listing /dev/shm leftovers when the playbook cleans
  /// them), a stopped ladder is kDone, and after kMaxSteps actions anything
  /// but kDone becomes kDidNotConverge.
  Action Next(const HostView& view) const;

  /// Whether step "i" of "action" (ActionSteps(action)[i]) counts, the
  /// steps before it reported and "view" the host's view once they were
  /// read. The action itself and the riders of a kStopUnits or a kCleanShm
  /// always count. A re-scan that rode on a wave counts when the ladder
  /// comes to it next, at once (every target gone, no parent alive, no
  /// restarting unit); the steps after one that does not count do not
  /// count either. After a re-scan the /dev/shm clean counts when the
  /// re-scan found the host clean or when the ladder comes to the clean
  /// next (HoldersSettled), and the quick verify when the re-scan was the
  /// verify.
  /// The runner reads the reply of a step that counts and reports it with
  /// FinishedStep; one that does not is left unread (what a /dev/shm step
  /// removed is reported either way).
  bool StepCounts(const Action& action, size_t i, const HostView& view) const;

  /// Records that step "i" of "action", one that StepCounts, ran and
  /// succeeded, "after" being the host's view once its reply was folded in.
  /// Steps are reported in order, each once; step 0 counts toward
  /// kMaxSteps. The only writer of the History. A re-scan after which the
  /// ladder's steps on the holders are over and the /dev/shm clean or the
  /// verify is due counts as the verify (RescanIsTheVerify: it read every
  /// GPU, and removing unused segments touches none). A run that failed
  /// stops reporting.
  void FinishedStep(const Action& action, size_t i, const HostView& after,
                    const StepResult& result = {});

  /// Every step of "action" at once, with the same "after": each that
  /// StepCounts, in order, reported with FinishedStep. For callers that
  /// read a round trip in one go (the escalation's tests).
  void Finished(const Action& action, const HostView& after, const StepResult& result = {});

  const History& history() const { return history_; }
  int steps() const { return steps_; }

 private:
  void Signalled(const Action& wave, const HostView& after);

  const Playbook& playbook_;
  EscalationMode mode_;
  History history_;
  bool ladder_stopped_ = false;
  int steps_ = 0;
};

/// The ladder's next action for a host that "history" describes, one step
/// (no Action::fused: RideAlong adds those). Never signals a holder whose
/// fate is kProtected or kUnkillable, nor one from a wave past max_rounds.
/// Never returns kDidNotConverge.
Action NextAction(const Playbook& playbook, const HostView& view, const History& history);

/// The ladder's steps on the holders are over for a host that "history"
/// describes (inspected): no unit to stop, no holder to signal, no re-scan
/// due. What may be left is the /dev/shm clean, the verify and the reset.
/// NextAction comes to them only then. Pure.
bool HoldersSettled(const Playbook& playbook, const HostView& view, const History& history);

/// The /dev/shm step is due: the playbook has one and, under a scope (whose
/// tenants' segments look alike by name), a holder this run signalled left
/// segments of its own (ShmFilesToClean). Pure.
bool ShmToClean(const Playbook& playbook, const HostView& view, const History& history);

/// A re-scan that leaves "history" and "view" is the verify: the holders
/// are settled and the ladder would only clean /dev/shm and verify next.
/// Escalation::FinishedStep's rule. Pure.
bool RescanIsTheVerify(const Playbook& playbook, const HostView& view, const History& history);

/// The rule of which steps share a round trip: the actions that ride along
/// after "next" (NextAction's), in order, for Action::fused. The TERM or
/// KILL wave after kStopUnits (the stops change no holder the inspect saw);
/// the quick verify after kCleanShm; after the first re-scan of a wave, the
/// /dev/shm clean and, when the re-scan is a full one, a quick verify (a
/// quick re-scan read every GPU and is the verify itself: the clean after
/// it frees host memory only); after the settle re-scan that a live parent
/// calls for, the clean; after a wave (alone or on the stops) the quick
/// re-scan and its clean, where the ladder would come to them at once once
/// the wave's targets are gone: no target's parent lives on (init, another
/// target, or the main process of a unit stopped first) and no target's
/// unit restarts it; under a scope the re-scan alone (the clean's
/// selection waits for what the wave signalled). On the host the steps
/// after a wave run only when it left no target of a TERM and no parent
/// alive (BatchScript). Pure.
std::vector<Action> RideAlong(const Action& next, const HostView& view, const History& history,
                              const Playbook& playbook);

/// The fate a dry run reports for "holder": kProtected, kWouldTerm,
/// kWouldKill (the playbook skips TERM), or kObserved (it signals nothing).
HolderFate PlannedFate(const Playbook& playbook, const Holder& holder);

}  // namespace fleetreap
