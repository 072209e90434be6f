// Playbook: the escalation ladder and its settings for one run, loaded from
// YAML (playbooks/*.yaml) or from the built-in default, which is the text of
// playbooks/default.yaml compiled into the binary. Only this module knows the
// playbook YAML (src/escalation/playbook*.cc: the keys, the ready section,
// the value readers, the step names); yaml-cpp errors are translated here
// into Status values that name the file, the line and the problem. Plain
// value type; the loaders are thread-safe (DefaultPlaybook() parses once, on
// first use).
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/escalation/readiness.h"

namespace fleetreap {

/// The rungs of the ladder, in the order they run. A playbook lists the ones
/// it wants; the order is always this one.
enum class Step {
  kInspect,      // nvidia-smi and the holder scan; always runs
  kStopUnits,    // systemctl stop the playbook's units that exist and are active
  kTerm,         // SIGTERM the unprotected holders, wait term_grace
  kKill,         // SIGKILL the survivors, wait kill_grace
  kRescan,       // re-scan after the settle period, up to max_rounds waves
  kCleanShm,     // remove unused /dev/shm leftovers matching shm_patterns
  kVerify,       // nvidia-smi and the holder scan again
  kResetGhosts,  // nvidia-smi --gpu-reset for GPUs with memory and no holder
};

/// "inspect", "stop_units", "term", "kill", "rescan", "clean_shm", "verify",
/// "reset_ghosts".
const char* StepName(Step step);

/// The step named "name" (one of StepName's), in "*step"; false for any
/// other name, "*step" unchanged.
bool StepFromName(const std::string& name, Step* step);

/// What clean_shm removes under a scope (--gpus, --cgroup, --spare-pods,
/// Slurm), playbook key shm_under_scope (docs/safety.md, "/dev/shm under a
/// scope").
enum class ShmUnderScope {
  kOwned,  // "owned": the unused segments of the holders this run signalled
  kNone,   // "none": nothing
};

struct Playbook {
  std::string name = "default";
  std::string description;
  std::string source;  // file path, or "<built-in default>"

  /// The steps that run; kInspect is always among them.
  std::vector<Step> steps = {Step::kInspect};

  /// systemd unit names or shell globs ("vllm*.service") to stop.
  std::vector<std::string> units;
  std::chrono::milliseconds unit_stop_timeout{30000};

  std::chrono::milliseconds term_grace{10000};
  std::chrono::milliseconds kill_grace{5000};
  /// How often the host polls for exited targets (100 to 200 ms is typical).
  std::chrono::milliseconds poll_interval{100};
  /// Time after the last signal before the re-scan when the host still looks
  /// dirty (GPU memory over the threshold or holders left).
  std::chrono::milliseconds settle{2000};
  /// Time after the last signal before the first re-scan. When that re-scan
  /// finds every GPU clean and no holder, the rest of "settle" is skipped.
  std::chrono::milliseconds settle_if_clean{500};
  /// How long after the last signal to keep re-scanning while something
  /// may start a signalled holder again: a parent of one is alive (not
  /// init), or its unit has Restart= and was not stopped, or the parent
  /// started new children that hold no GPU yet (a restarted worker needs
  /// seconds to open its GPU: 5 s for PyTorch on an H200). The re-scans
  /// come less often as the watch goes on (11 for 30 s). A newcomer still
  /// without a GPU at the end leaves the host dirty; a restarter that
  /// started nothing is named in a note (docs/playbooks.md). Orphans, whose
  /// parent is init, are not watched.
  std::chrono::milliseconds respawn_wait{30000};
  /// Signal waves at most, the first one included.
  int max_rounds = 3;

  /// /dev/shm entry names (shell globs, no '/') that may be removed when no
  /// live process has them open or mapped.
  std::vector<std::string> shm_patterns;
  /// Under a scope only the segments that a holder this run signalled had
  /// open or mapped, owned by that holder's uid (kOwned), or none.
  ShmUnderScope shm_under_scope = ShmUnderScope::kOwned;

  /// A GPU is clean at or below this many MiB (per host overridable).
  int64_t threshold_mib = 0;

  /// Names or absolute paths added to the built-in protected list.
  std::vector<std::string> protect;

  /// MiB a protected daemon's own context may keep on a GPU that still
  /// counts as clean (protected_only, the daemon named), by protected entry:
  /// {"nvidia-cuda-mps-server": 256}. Above it the GPU is busy.
  std::map<std::string, int64_t> daemon_allowance_mib;

  /// reset_ghosts on a GPU that only protected daemons hold (no job):
  /// NVIDIA's procedure, stop their units, reset, start the units again. A
  /// daemon without a unit, or a unit that does not come back, leaves the
  /// host dirty and named. False: such a GPU is not reset, its daemon named.
  bool reset_stops_daemons = false;

  /// The "ready:" section: which readiness checks run and what they block
  /// (docs/readiness.md); "ready: off" turns them all off.
  ReadyPolicy ready;

  /// True when "step" is among the steps.
  bool Runs(Step step) const;
};

/// Parses "yaml" read from "source" (a path, for error messages). Errors are
/// ErrorKind::kInvalidInput with messages like
/// `playbooks/x.yaml:7:3: term_grace must be a duration like "10s", got "soon"`.
/// Unknown keys are errors. "*playbook" is written only on success.
Status ParsePlaybook(const std::string& yaml, const std::string& source, Playbook* playbook);

/// Reads and parses the playbook at "path". A name without a folder that
/// is no file here is a shipped playbook ("reset.yaml"): looked for in
/// ShippedPlaybookDirs of this binary, the first there taken. A missing or
/// unreadable file (a directory too) is ErrorKind::kInvalidInput naming the
/// path and the system's reason:
/// `p.yaml: cannot read the playbook file: No such file or directory`.
Status LoadPlaybookFile(const std::string& path, Playbook* playbook);

/// Where the shipped playbooks are for the binary at "exe": an install's
/// PREFIX/share/fleetreap/playbooks (PREFIX/bin/fleetreap), then a source
/// tree's playbooks/ (a build folder's fleetreap). Empty for an "exe"
/// without a folder.
std::vector<std::string> ShippedPlaybookDirs(const std::string& exe);

/// The built-in default playbook (the text of playbooks/default.yaml).
const Playbook& DefaultPlaybook();

/// The text DefaultPlaybook() was parsed from.
const char* DefaultPlaybookText();

/// The steps of a playbook that names none: the whole ladder (inspect,
/// stop_units, term, kill, rescan, clean_shm, verify).
std::vector<Step> DefaultPlaybookSteps();

}  // namespace fleetreap
