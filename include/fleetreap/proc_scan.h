// ProcScan: the remote shell snippet that finds every process holding an
// NVIDIA device file and describes it, and the parser for what it prints.
// Script and parser live together so their record format cannot drift apart.
// Pure functions; thread-safe.
//
// The snippet is POSIX sh using coreutils and procps only (psmisc's fuser
// when present, else a /proc/[0-9]*/fd scan with readlink). It covers
// /dev/nvidia[0-9]*, /dev/nvidiactl, /dev/nvidia-uvm*, /dev/nvidia-caps/* and
// /dev/nvidia-modeset. Every string a process controls (comm, exe, cmdline)
// and every path travels hex-encoded (od -tx1), so no process can forge or
// break a record, whatever bytes its name holds.
//
// Record format, one per line, fields separated by one space:
//   fleetreap-holders 1 <method>            method: fuser | proc
//   dev <hex path>                          a device file that exists
//   hold <pid> <hex path>                   pid holds that file
//   proc <pid> <hex stat> <uid> <hex user> <hex exe> <hex cmdline>
//   gone <pid>                              exited before it was described
//   minor <bus id> <n>                      /dev/nvidia<n> is the GPU at <bus id>
//   end
// "-" stands for an empty or unreadable value. The "end" line proves the
// output is complete.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/report.h"
#include "fleetreap/status.h"

namespace fleetreap {

/// Knobs for tests; production uses the defaults.
struct HolderScanOptions {
  std::string dev_dir = "/dev";  // where the nvidia* device files live
  std::string driver_dir = "/proc/driver/nvidia/gpus";  // <bus id>/information
  bool allow_fuser = true;       // false forces the /proc fd scan
};

/// The snippet's text. Run it with /bin/sh (through BoundedCommand); it
/// prints the records above on stdout and exits 0, also when nothing holds a
/// device or no device exists. The fuser method also sees memory maps of a
/// device; the /proc method sees open file descriptors only. Cost: one fuser
/// (or one ls over all /proc/PID/fd) per device file, then about ten forks
/// per holder.
std::string HolderScanScript(const HolderScanOptions& options = HolderScanOptions());

/// What a scan saw besides the holders.
struct HolderScanInfo {
  std::string method;                // "fuser" or "proc"
  std::vector<std::string> devices;  // device files that exist
  std::vector<int> gone;             // holders that exited mid-scan
  /// Device minor (the N of /dev/nvidiaN) by PCI bus id as the driver names
  /// it ("0000:18:00.0"), from /proc/driver/nvidia/gpus/*/information. See
  /// MapHolderGpusToIndexes (gpu_state.h).
  std::map<std::string, int> minors;
};

/// Parses the snippet's stdout into one Holder per holding PID (ascending
/// pid), with pid, start_time (field 22 of /proc/PID/stat, read after the
/// LAST ')'), ppid, state, user (name, or the numeric uid when it has none),
/// comm, exe, cmdline (NULs to spaces, tabs and newlines to spaces, trailing
/// space dropped), devices (sorted) and gpus (indexes of /dev/nvidiaN,
/// sorted). fate, protected_by and round keep their defaults. Holders that
/// exited mid-scan are left out and listed in info->gone ("info" may be null).
/// Errors are kParse naming the line: "holder scan line 4: bad hex in exe";
/// output without the "end" line is "holder scan: output is truncated (no end
/// line)".
Status ParseHolderScan(const std::string& out, std::vector<Holder>* holders,
                       HolderScanInfo* info = nullptr);

/// Parses one /proc/PID/stat line into "holder" (pid, comm, state, ppid,
/// start_time). kParse on a malformed line.
Status ParseProcStat(const std::string& stat, Holder* holder);

/// The GPU index of an NVIDIA device path: "/dev/nvidia3" -> 3 (any
/// directory, so tests may use stand-in files). Returns -1 for every other
/// path (nvidiactl, nvidia-uvm, nvidia-caps/nvidia-cap1...).
int GpuIndexOfDevice(const std::string& path);

}  // namespace fleetreap
