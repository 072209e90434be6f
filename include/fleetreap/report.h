// Report: the data fleetreap produces, per GPU, per holder, per host and per
// run. The escalation fills it; report_table, report_json, report_junit and
// report_markdown render it as pure functions. Plain values; thread-compatible.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/process_owner.h"
#include "fleetreap/scope.h"
#include "fleetreap/status.h"

namespace fleetreap {

/// The state of one GPU after classification (see gpu_state.h).
enum class GpuState {
  kClean,          // memory.used at or below the threshold
  kBusy,           // held by non-protected processes
  kProtectedOnly,  // held only by protected daemons, under the threshold
  kGhost,          // over the threshold with no holder: needs a reset
  kLost,           // nvidia-smi cannot reach it
  kMissing,        // expected by the inventory but absent
  kUnknown,        // the value could not be read
  kRecovery,       // the driver asks for a recovery action (gpu_recovery_action)
  kOutOfScope,     // outside the run's scope (--gpus), or held only by others' jobs
};
const char* GpuStateName(GpuState state);

/// Whether a GPU in this state lets its host be clean: clean,
/// protected_only or out_of_scope.
bool GpuStateIsClean(GpuState state);

struct GpuReading {
  int index = -1;
  std::string uuid;
  std::string name;
  std::string bus_id;
  std::optional<int64_t> used_mib;   // nullopt: unknown ([N/A] and friends)
  std::optional<int64_t> total_mib;
  GpuState state = GpuState::kUnknown;
  std::string detail;                // e.g. the "GPU is lost" message
  /// nvidia-smi's gpu_recovery_action as printed ("None", "Reset", "Reboot",
  /// "Drain P2P", "Drain and Reset"; control bytes escaped, capped), "" when
  /// not queried (older drivers reject the field) or unknown ("[N/A]").
  /// Anything but "None" or "" keeps the GPU from being clean (gpu_state.h).
  std::string recovery_action;
};

/// What happened to a process that held an NVIDIA device file.
enum class HolderFate {
  kObserved,    // inspected only (inspect playbook), nothing decided
  kTerminated,  // exited after SIGTERM
  kKilled,      // exited after SIGKILL
  kGone,        // vanished on its own before we signalled it
  kProtected,   // protected: never signalled
  kUnkillable,  // survived SIGKILL (D state, unreaped zombie)
  kWouldTerm,   // dry run: would get SIGTERM
  kWouldKill,   // dry run: would get SIGKILL (playbook skips TERM)
  kOutOfScope,  // outside the run's scope (--gpus, --cgroup): never signalled
};

/// Whether fleetreap may never signal a holder of this fate.
bool NeverSignalled(HolderFate fate);
const char* HolderFateName(HolderFate fate);

struct Holder {
  int pid = 0;
  uint64_t start_time = 0;   // /proc/PID/stat field 22, clock ticks since boot
  int ppid = 0;
  std::string user;
  char state = '?';          // /proc/PID/stat field 3
  std::string comm;          // 15-character kernel name
  std::string exe;           // /proc/PID/exe target, "" if unreadable
  std::string cmdline;       // NUL separators turned into spaces
  std::vector<int> gpus;     // indexes of /dev/nvidiaN it holds
  std::vector<std::string> devices;  // every NVIDIA path it holds
  HolderFate fate = HolderFate::kObserved;
  std::string protected_by;  // the protect rule that matched, if any
  /// A protected daemon's name it carries without being it ("nvidia-persistenced"
  /// for a user's copy named so); such a holder is a job.
  std::string named_like;
  std::string out_of_scope;  // why it is outside the run's scope, if it is
  ProcessOwner owner;        // from /proc/PID/cgroup
  std::vector<int> charged_gpus;  // GPUs nvidia-smi charges memory to it on
  int exe_uid = -1;          // owner and mode of the executable file, -1 unknown
  int exe_mode = -1;
  unsigned flags = 0;        // /proc/PID/stat field 9 (PF_KTHREAD...)
  int round = 1;             // the scan round that found it
};

enum class HostStatus { kClean, kDirty, kUnreachable, kFailed };
const char* HostStatusName(HostStatus status);

struct StepTiming {
  std::string step;          // "connect", "inspect", "stop_units", "term", ...
  std::chrono::milliseconds duration{0};
};

struct HostReport {
  std::string name;
  std::string address;
  int port = 22;
  HostStatus status = HostStatus::kFailed;
  ErrorKind error_kind = ErrorKind::kNone;
  std::string error_message;
  /// The host key the server offered ("SHA256:...", as ssh-keygen -l prints
  /// it), whatever the policy; "" when key exchange never got that far.
  std::string host_key_fingerprint;
  std::vector<GpuReading> gpus_before;
  std::vector<GpuReading> gpus_after;
  std::vector<Holder> holders;
  std::vector<std::string> units_stopped;
  std::vector<std::string> units_would_stop;   // dry run
  std::vector<std::string> units_skipped;      // "UNIT: why it was not stopped"
  std::vector<std::string> shm_removed;
  std::vector<std::string> shm_would_remove;   // dry run
  std::vector<StepTiming> timings;
  int term_sent = 0;
  int kill_sent = 0;
  int rounds = 0;                 // scan rounds run
  std::string respawning_parent;  // "1234 (python3)" when holders kept coming
  std::vector<int> gpus_reset;
  std::string reset_blocked_by;   // protected daemon that blocked a reset
  std::string nvidia_smi_error;   // the tool's own message when it failed
  int attempts = 1;               // connection attempts
  std::chrono::milliseconds duration{0};
};

struct RunReport {
  std::string tool_version;
  std::chrono::system_clock::time_point start_time;
  std::chrono::milliseconds duration{0};
  std::string playbook;           // playbook name
  bool dry_run = false;
  bool interrupted = false;       // Ctrl-C: hosts not started are left out
  /// --host-key-policy ("strict", "accept-new", "off"); "" under --local.
  std::string host_key_policy;
  Scope scope;                    // --gpus, --cgroup, or the Slurm job
  std::vector<HostReport> hosts;  // in inventory order
  /// Names of selected hosts never started (interrupted, deadline), in
  /// inventory order; the reports list them and --failed-hosts includes them.
  std::vector<std::string> not_started;
};

/// Exit code for a finished run: 0 clean, |1 reached and not clean,
/// |2 unreachable or failed. A dry run only sets bit 2.
int ExitCodeFor(const RunReport& report);

}  // namespace fleetreap
