// RemoteScript: the POSIX shell scripts fleetreap runs on a host, one per
// rung of the ladder; the parsers for what they print are in
// remote_script_output.h, which this header includes. Each script does
// its whole rung in one round trip (the TERM wait polls on the host). They
// need only sh, coreutils, procps, grep and nvidia-smi (psmisc's fuser when
// present), and copy nothing to the host. Every value that comes from a
// playbook or an inventory (unit names, patterns) goes through ShellQuote;
// PIDs and start times are formatted integers. The scripts are meant to be
// wrapped with BoundedCommand. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/escalation.h"
#include "fleetreap/remote_script_output.h"

namespace fleetreap {

// ---------------------------------------------------------------- scan

/// The scan used for inspect, re-scan and verify: the remote shell's own PID
/// and ancestors, the playbook's units that are active ("units" may be
/// globs; none listed when empty), nvidia-smi's GPU query bounded by
/// "nvidia_smi_timeout" (its stdout, stderr and exit status kept apart), and
/// the holder scan of proc_scan.h (left out when "holders" is false: the
/// section is then empty), and the children of the "watch" PIDs (parents
/// of signalled holders) as "PARENT PID START COMM", each parent first as
/// "PARENT 0 0 COMM", in sections marked by lines "@@name".
std::string ScanScript(const std::vector<std::string>& units,
                       std::chrono::milliseconds nvidia_smi_timeout,
                       bool holders = true, const std::vector<int>& watch = {});

/// The per-GPU fallback when the whole-host query failed on a lost GPU:
/// nvidia-smi -i N for each index, each bounded by "timeout". Prints
/// "@@gpu N RC" and then that query's stdout, for each N, then "@@end".
std::string PerGpuQueryScript(const std::vector<int>& indexes,
                              std::chrono::milliseconds timeout);

// ---------------------------------------------------------------- units

/// Stops each unit with "systemctl stop", each bounded by "timeout". Prints
/// "stop RC I" per unit, I being its index in "units".
std::string StopUnitsScript(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout);

// ---------------------------------------------------------------- signals

/// Sends "signal" ("TERM" or "KILL") to each target whose /proc/PID/stat
/// start time still matches, read right before the kill; then polls every
/// "poll" on the host until every target is gone or "wait" has passed, and
/// returns as soon as the last one is gone. A zombie still counts as
/// present. Prints "now TICKS" (the host's clock when it signalled, in the
/// unit of /proc start times), "sent PID", "gone PID" (never signalled: already gone or
/// reused), "failed PID" (kill refused), then "left PID STATE" for each
/// target still present at the end, then "@@end".
std::string SignalScript(const std::string& signal,
                         const std::vector<Target>& targets,
                         std::chrono::milliseconds wait,
                         std::chrono::milliseconds poll);

// ---------------------------------------------------------------- /dev/shm

/// Looks at each regular file directly in /dev/shm whose name matches one of
/// "patterns" (globs matched with case, never expanded into commands) and
/// removes it unless a live process has it open or mapped. With "dry_run"
/// nothing is removed. Prints "removed NAME", "would NAME", "inuse NAME" or
/// "failed NAME", then "@@end". Runs in a subshell: another script may follow.
std::string ShmCleanScript(const std::vector<std::string>& patterns,
                           bool dry_run);

// ---------------------------------------------------------------- reset

/// Runs "nvidia-smi --gpu-reset -i N" for each GPU in turn. Prints
/// "reset N RC" followed by the tool's output lines prefixed with "| ".
std::string GpuResetScript(const std::vector<int>& gpus);

}  // namespace fleetreap
