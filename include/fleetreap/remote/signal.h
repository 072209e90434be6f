// Signal: the signal step, its script and the parser of its reply (a
// model value, SignalReply of model/host_reply.h). Every PID and start time
// is a formatted integer. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/model/target.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/host_paths.h"

namespace fleetreap {

/// Reads the targets' fds and mappings afresh (the fd and maps passes
/// limited to them), then sends "signal" ("TERM" or "KILL") to each target
/// whose start time still matches, that is not a zombie, and that still
/// holds an NVIDIA device file, by an fd of any thread or a mapping (also
/// a target that only nvidia-smi named, needs_fd false), through a pidfd
/// where the host has perl and the kernel pidfds; then waits on the host until every target is gone
/// or "wait" has passed, looking at the targets every 10 ms for the first second and every "poll"
/// after it (one sleep per look: a wait of W seconds past its first starts at most 100 + W / poll
/// processes). A process whose every thread has exited (a zombie waiting for its reaper) is gone:
/// it has closed its files, and the verify proves its memory; a leader in state Z whose other
/// threads run is present. Prints "signal 1", "now TICKS" (the host's clock at the signals, in the
/// unit of process start times), "sent PID", "gone PID" (never signalled:
/// exited, reused, or no longer holding a device), "failed PID" (kill
/// refused), then, with "audit"'s run id and a signal sent, "audit N RC"
/// (the line "action=term|kill" and the target's fields of
/// audit.targets, or pid and start, for each signal sent, handed to one
/// logger before the wait), then "left PID STATE" for each target signalled and still
/// present (never a zombie), "parent PID" (see below), "done CS" (centiseconds from the
/// signals to the end of the wait), "end".
/// With "parents" (the targets' parents), also "parent PID" for each of
/// them still alive (not a zombie) at the end: a dead parent restarts nothing, so the
/// respawn watch can let it go.
/// With "scan_start" (the clock of the scan that found the targets,
/// ScanOutput::clock), a target whose start time is not before it was born
/// while that scan ran (its PID may be a reused one that the scan paired
/// with an older nvidia-smi answer): it is "gone", never signalled, and the
/// next scan, which started after it, may target it.
std::string SignalScript(const std::string& signal, const std::vector<Target>& targets,
                         std::chrono::milliseconds wait, std::chrono::milliseconds poll,
                         const HostPaths& paths = HostPaths(), const std::vector<int>& parents = {},
                         const AuditRequest& audit = AuditRequest(), uint64_t scan_start = 0);

/// Parses SignalScript's stdout.
[[nodiscard]] Status ParseSignalOutput(const std::string& out, SignalReply* result);

}  // namespace fleetreap
