// The /dev/shm files the holders hold (private to src/remote/): the shell
// functions the scan and the shm step share, and the scan's "shmh" records'
// grammar. Pure; thread-safe.
#pragma once

#include <string>

#include "fleetreap/remote/host_records.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"

namespace fleetreap {
namespace remote_script_internal {

/// Defines, for a script that has the prelude: "sdx DEV" (sets SX to the
/// device number DEV, st_dev as glibc encodes it, as /proc/PID/maps spells
/// it: "00:1a") and "shmh PIDS" (with SM, the /dev/shm folder, set: the
/// regular files directly in it that those processes hold, by inode on its
/// device: open, by the fds of every thread, or mapped, by the maps lines on
/// that device, a leader in state Z by its threads' maps; at most 64 files
/// per process, each with its owner's uid; names are never read). shmh
/// prints nothing without SM; "shmh -" when the folder's device is unknown;
/// else "shmh 1", then one "shmf PID INODE UID" per (process, file). It
/// starts at most six processes, whatever the number of holders: find for
/// the folder's device, grep for the maps, find, stat and head for the fds,
/// find for the owners.
std::string ShmHolderFunctions();

}  // namespace remote_script_internal

/// The scan's "shmh -" or "shmh 1" and "shmf PID INODE UID" records, when
/// they come (the scan asked for them: ScanRequest::shm_files), into
/// "scan->shm_holds".
[[nodiscard]] Status TakeShmHolderRecords(RecordReader& reader, ScanOutput* scan);

}  // namespace fleetreap
