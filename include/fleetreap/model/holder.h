// Holder: a process that holds an NVIDIA device file or that nvidia-smi
// charges GPU memory to, as the holder scan reads it from /proc, and what
// happened to it (HolderFate). Part of the host model that the parsers fill,
// the escalation reads and the reports render. Plain values; thread-compatible.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/model/process_owner.h"
#include "fleetreap/model/shm_file.h"

namespace fleetreap {

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
  uint64_t start_time = 0;  // /proc/PID/stat field 22, clock ticks since boot
  int ppid = 0;
  std::string user;
  int uid = -1;                      // real uid (/proc/PID/status), -1 unknown
  char state = '?';                  // /proc/PID/stat field 3
  std::string comm;                  // 15-character kernel name
  std::string exe;                   // /proc/PID/exe target, "" if unreadable
  std::string cmdline;               // NUL separators turned into spaces
  std::vector<int> gpus;             // indexes of /dev/nvidiaN it holds
  std::vector<std::string> devices;  // every NVIDIA path it holds
  HolderFate fate = HolderFate::kObserved;
  std::string protected_by;  // the protect rule that matched, if any
  /// A protected daemon's name it carries without being it ("nvidia-persistenced"
  /// for a user's copy named so); such a holder is a job.
  std::string named_like;
  std::string out_of_scope;       // why it is outside the run's scope, if it is
  ProcessOwner owner;             // from /proc/PID/cgroup
  std::vector<int> charged_gpus;  // GPUs nvidia-smi charges memory to it on
  int exe_uid = -1;               // owner and mode of the executable file, -1 unknown
  int exe_mode = -1;
  unsigned flags = 0;  // /proc/PID/stat field 9 (PF_KTHREAD...)
  /// Its environment (/proc/PID/environ, where readable) sets LD_PRELOAD or
  /// LD_AUDIT: someone's code runs inside its executable.
  bool preloaded = false;
  /// The /dev/shm files it had open or mapped, by inode (every scan that
  /// saw it, joined).
  std::vector<ShmFile> shm_files;
  int round = 1;  // the scan round that found it
};

}  // namespace fleetreap
