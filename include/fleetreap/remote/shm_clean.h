// ShmClean: the /dev/shm step, its script and the parser of its reply.
// Patterns go through ShellQuote. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/model/shm_file.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"

namespace fleetreap {

/// Removes each regular file directly in /dev/shm whose name matches one of
/// "patterns" (find -name globs) unless its inode is open or mapped by any
/// process (read right before the removal, by inode on /dev/shm's device,
/// whatever the file's name holds). Symlinks and directories are never
/// followed or removed; nothing outside /dev/shm is reached. With "dry_run"
/// nothing is removed. Prints "shm 1", then "removed:NAME", "would:NAME",
/// "inuse:NAME" or "failed:NAME" per match, then "shmerr:TEXT" (find's
/// error lines, which say why a removal failed) when find printed any, then
/// (with "audit"'s run id and a file removed) "audit N RC" for the lines
/// "action=shm_remove file=PATH", then "end" (ParseShmOutput). With a scan
/// in the same round trip: batch.h. Under a scope "selection" lists
/// the only files that are candidates at all, by inode and the owner's uid
/// each must still have (the segments of the holders the run signalled);
/// the others matching "patterns" are neither read nor listed.
std::string ShmCleanScript(const std::vector<std::string>& patterns, bool dry_run,
                           const HostPaths& paths = HostPaths(),
                           const AuditRequest& audit = AuditRequest(),
                           const ShmSelection& selection = ShmSelection());

struct ShmOutput {
  std::vector<std::string> removed;  // or would be, in a dry run
  std::vector<std::string> in_use;
  std::vector<std::string> failed;
  std::string failed_why;   // the system's reason ("Permission denied"), "" if none failed
  AuditOutcome audit = {};  // the lines of the files removed
};
/// Parses ShmCleanScript's stdout, and with "scan" the ScanScript output
/// that follows it in the same round trip; without "scan" an "end" record
/// must follow the shm records.
[[nodiscard]] Status ParseShmOutput(const std::string& out, ShmOutput* result,
                                    ScanOutput* scan = nullptr);

}  // namespace fleetreap
