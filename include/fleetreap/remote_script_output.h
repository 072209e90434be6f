// RemoteScriptOutput: the parsers for what the scripts of remote_script.h
// print, one per script. Each takes the script's stdout and returns data,
// stopping at the script's final "@@end" line. Output without that line (cut
// short) is a kParse error, and so is a line the parser cannot read; the
// message names the script, and quotes the line. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "fleetreap/status.h"

namespace fleetreap {

// ---------------------------------------------------------------- scan

/// A child of a watched parent (escalation.h's respawn watch).
struct ChildProcess {
  int parent = 0;
  int pid = 0;
  uint64_t start_time = 0;  // clock ticks since boot
  std::string comm;
};

struct ScanOutput {
  int shell_pid = 0;
  std::vector<int> ancestors;            // parent first, PID 1 excluded
  std::vector<std::string> active_units;
  std::string nvidia_smi_out;
  std::string nvidia_smi_err;
  int nvidia_smi_exit = -1;              // 124: timed out, 127: not found
  std::string holder_scan;               // proc_scan.h records
  std::vector<ChildProcess> children;    // of the watched parents
  std::vector<ChildProcess> parents;     // the watched parents (pid 0, comm)
};

/// Splits ScanScript's stdout into its sections. kParse when a section is
/// missing or the final "@@end" is absent (truncated output).
Status ParseScanOutput(const std::string& out, ScanOutput* scan);

struct PerGpuQuery {
  int index = -1;
  int exit_code = -1;
  std::string out;
};
/// Parses PerGpuQueryScript's stdout: one query per "@@gpu N RC" line, with
/// the lines that follow it as its stdout.
Status ParsePerGpuQueryOutput(const std::string& out,
                              std::vector<PerGpuQuery>* queries);

// ---------------------------------------------------------------- units

struct UnitStop {
  std::string unit;
  int exit_code = -1;
};
/// Parses StopUnitsScript(units, ...)'s stdout; "units" names the indexes.
Status ParseStopUnitsOutput(const std::string& out,
                            const std::vector<std::string>& units,
                            std::vector<UnitStop>* stops);

// ---------------------------------------------------------------- signals

struct SignalOutput {
  uint64_t now = 0;           // the host's clock at the signals, in ticks
  std::vector<int> sent;
  std::vector<int> gone;      // gone before the signal
  std::vector<int> failed;    // kill(1) refused (EPERM...)
  std::vector<std::pair<int, char>> left;  // still present, with state
};
/// Parses SignalScript's stdout.
Status ParseSignalOutput(const std::string& out, SignalOutput* result);

// ---------------------------------------------------------------- /dev/shm

struct ShmOutput {
  std::vector<std::string> removed;   // or would be, in a dry run
  std::vector<std::string> in_use;
  std::vector<std::string> failed;
};
/// Parses ShmCleanScript's stdout up to its "@@end"; what follows (another
/// script's output) is ignored.
Status ParseShmOutput(const std::string& out, ShmOutput* result);

// ---------------------------------------------------------------- reset

struct GpuReset {
  int gpu = -1;
  int exit_code = -1;
  std::string message;  // the tool's output, lines joined with "; "
};
/// Parses GpuResetScript's stdout.
Status ParseGpuResetOutput(const std::string& out, std::vector<GpuReset>* resets);

}  // namespace fleetreap
