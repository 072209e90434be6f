// FuserOutput: reads what psmisc's fuser prints. fuser writes only the PIDs to
// stdout; the file names ("/dev/nvidia0:") and access letters ("m", "c", "e",
// "r", "f", "F") go to stderr, and exit status 1 means "nobody holds any of
// the files" (or a fatal error, told apart by stderr). Pure functions;
// thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/status.h"

namespace fleetreap {

/// One PID as fuser reported it, with the access letters when they were
/// visible (merged streams), else "".
struct FuserEntry {
  int pid = 0;
  std::string access;
  std::string file;  // the file name it was listed under, "" if unknown
};

struct FuserResult {
  /// Every PID found, deduplicated, ascending.
  std::vector<int> pids;
  /// Every (pid, file) pair in order of appearance, duplicates across files
  /// kept. With separate streams "file" is known only when one file was named.
  std::vector<FuserEntry> entries;
  /// Files fuser named on stderr, in order.
  std::vector<std::string> files;
  /// Files fuser said do not exist ("Specified filename X does not exist.").
  std::vector<std::string> missing_files;
  /// Other stderr lines, e.g. "Cannot stat file /proc/1/fd/0: Permission
  /// denied": processes fuser could not inspect, so the scan may be partial.
  std::vector<std::string> warnings;
};

/// Parses one fuser run. "out" is stdout (PIDs separated by blanks); "err" is
/// stderr (file names and access letters). Also accepts stdout that carries
/// merged stderr ("/dev/nvidia0:  1234m 5678"). Exit 1 with no PIDs is OK with
/// an empty result ("nobody"); exit 0 and 1 are the only accepted statuses,
/// anything else is kCommandFailed with fuser's stderr. A token that is not a
/// PID is kParse: "fuser output: expected a PID, got \"abc\"".
/// The verbose (-v) table on stderr is not parsed (its COMMAND column is
/// process-controlled text); its lines land in "warnings".
Status ParseFuserOutput(const std::string& out, const std::string& err,
                        int exit_code, FuserResult* result);

}  // namespace fleetreap
