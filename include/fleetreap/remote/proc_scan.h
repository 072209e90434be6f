// ProcScan: turns what a scan read about processes (scan_output.h's
// ScanOutput: the fd pass's device fds, each process's stat, status,
// cmdline and exe, /etc/passwd) into Holders, and reads /proc/PID/stat by
// the kernel's rule. Every PID nvidia-smi charges memory to is a holder too,
// whatever the fd pass saw. Pure functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/remote/scan_output.h"

namespace fleetreap {

/// What a scan saw besides the holders.
struct HolderScanInfo {
  std::vector<int> gone;  // held a device, exited before it was described
  /// 1 + the highest GPU device minor held, by number or path: a lower bound
  /// on the GPUs the driver knows.
  int device_gpus = 0;
};

/// One Holder per PID with an NVIDIA device fd (ascending PID): pid,
/// start_time, ppid, state, comm (control characters as '?'), user (name
/// from /etc/passwd, else the numeric uid), exe, cmdline (argv joined with
/// spaces, control characters as spaces, at most 4096 bytes), devices (the
/// device names, sorted: "/dev/nvidia3", "/dev/nvidiactl", "/dev/nvidia-uvm",
/// "/dev/nvidia-caps/nvidia-cap1"...) and gpus (device minors of
/// /dev/nvidiaN, sorted; MapHolderGpusToIndexes turns them into indexes).
/// kParse when a process's stat cannot be read.
[[nodiscard]] Status HoldersFromScan(const ScanOutput& scan, std::vector<Holder>* holders,
                                     HolderScanInfo* info = nullptr);

/// The processes "pids" (those nvidia-smi charges memory to that hold no
/// device fd) described from "scan" as holders (no devices, no gpus). A PID
/// this /proc does not show (another PID namespace), or whose stat cannot be
/// read, is left out: the fold (escalation/host_fold.h) then makes it a holder
/// protected as "not in this host's /proc".
std::map<int, Holder> DescribeProcesses(const ScanOutput& scan, const std::vector<int>& pids);

/// The name of NVIDIA device MAJOR:MINOR, "majors" naming the majors as
/// /proc/devices does: 195:3 "/dev/nvidia3", 195:255 "/dev/nvidiactl",
/// uvm 0 "/dev/nvidia-uvm", caps 1 "/dev/nvidia-caps/nvidia-cap1"...;
/// "nvidia-foo 240:7" for one it does not know.
std::string DeviceName(int major, int minor, const std::map<int, std::string>& majors);

/// Parses one /proc/PID/stat into "holder" (pid, comm, state, ppid,
/// start_time): the comm is everything between the first '(' and the LAST
/// ')'. kParse on a malformed text.
[[nodiscard]] Status ParseProcStat(const std::string& stat, Holder* holder);

/// Whether the scan ran in the host's PID namespace, where nvidia-smi's PIDs
/// live: the initial one (pid:[4026531836], the kernel's PROC_PID_INIT_INO),
/// or the one a root-owned /etc/fleetreap/host-pid-namespace names (a host
/// that is itself a container, as the simulated hosts are).
bool SeesHostPidNamespace(const ScanOutput& scan);

/// The GPU index of an NVIDIA device path: "/dev/nvidia3" -> 3 (any
/// directory, so tests may use stand-in files). Returns -1 for every other
/// path (nvidiactl, nvidia-uvm, nvidia-caps/nvidia-cap1...).
int GpuIndexOfDevice(const std::string& path);

}  // namespace fleetreap
