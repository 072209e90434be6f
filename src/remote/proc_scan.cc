// Holders from a scan's records (proc_scan.h).
#include "fleetreap/remote/proc_scan.h"

#include <algorithm>
#include <set>
#include <sstream>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

bool ParsePid(const std::string& text, int* pid) {
  uint64_t value = 0;
  if (!ParseUnsigned(text, 0x3fffffff, &value) || value == 0) return false;
  *pid = static_cast<int>(value);
  return true;
}

// Control characters become "replacement"; NULs in a cmdline separate words.
std::string Neutralise(const std::string& text, char replacement) {
  std::string clean = text;
  for (char& c : clean) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = replacement;
  }
  return clean;
}

std::string CleanCmdline(const std::string& raw) {
  std::string cmdline = Neutralise(raw, ' ');
  cmdline.erase(cmdline.find_last_not_of(' ') + 1);
  return cmdline;
}

// The real uid of a /proc/PID/status text ("Uid:\t1000\t1000..."), or "".
std::string UidOf(const std::string& status) {
  for (const std::string& line : SplitLines(status)) {
    if (line.rfind("Uid:", 0) != 0) continue;
    std::stringstream words(line.substr(4));
    std::string uid;
    uint64_t value = 0;
    if (words >> uid && ParseUnsigned(uid, UINT32_MAX, &value)) return uid;
    return "";
  }
  return "";
}

// The user name of "uid" in an /etc/passwd text, else "uid" itself.
std::string UserOf(const std::string& uid, const std::string& passwd) {
  if (uid.empty()) return "";
  for (const std::string& line : SplitLines(passwd)) {
    size_t a = line.find(':');
    size_t b = a == std::string::npos ? a : line.find(':', a + 1);
    size_t c = b == std::string::npos ? b : line.find(':', b + 1);
    if (c == std::string::npos) continue;
    if (line.compare(b + 1, c - b - 1, uid) == 0) return Neutralise(line.substr(0, a), '?');
  }
  return uid;
}

// "holder" described from the scan's texts; false when its stat is missing.
Status Describe(const ScanOutput& scan, int pid, Holder* holder, bool* found) {
  *found = false;
  auto text = scan.processes.find(pid);
  if (text == scan.processes.end() || text->second.stat.empty()) return Status::Ok();
  Status status = ParseProcStat(text->second.stat, holder);
  if (!status.ok()) return status;
  if (holder->pid != pid) {
    return Status::Error(ErrorKind::kParse, "proc stat of pid " + std::to_string(pid) +
                                                " names pid " + std::to_string(holder->pid));
  }
  const std::string uid = UidOf(text->second.status);
  holder->user = UserOf(uid, scan.passwd);
  uint64_t uid_value = 0;
  if (ParseUnsigned(uid, INT32_MAX, &uid_value)) holder->uid = static_cast<int>(uid_value);
  holder->preloaded = text->second.preloaded;
  holder->exe = Neutralise(text->second.exe, '?');
  holder->exe_uid = text->second.exe_uid;
  holder->exe_mode = text->second.exe_mode;
  holder->owner = OwnerFromCgroup(CgroupPathOf(text->second.cgroup));
  std::string cmdline;
  for (const std::string& arg : text->second.argv) {
    if (cmdline.size() > 4096) break;
    cmdline += (cmdline.empty() ? "" : " ") + arg;
  }
  holder->cmdline = CleanCmdline(cmdline.substr(0, 4096));
  *found = true;
  return Status::Ok();
}

}  // namespace

std::string DeviceName(int major, int minor, const std::map<int, std::string>& majors) {
  auto named = majors.find(major);
  std::string name = named == majors.end() ? "" : named->second;
  std::string m = std::to_string(minor);
  if (major == 195) {
    if (minor == 255) return "/dev/nvidiactl";
    if (minor == 254) return "/dev/nvidia-modeset";
    return "/dev/nvidia" + m;
  }
  if (name == "nvidia-uvm") return minor == 0 ? "/dev/nvidia-uvm" : "/dev/nvidia-uvm-tools";
  if (name == "nvidia-caps") return "/dev/nvidia-caps/nvidia-cap" + m;
  if (name == "nvidia-caps-imex-channels") return "/dev/nvidia-caps-imex-channels/channel" + m;
  if (name == "nvidia-nvswitch") return "/dev/nvidia-nvswitch" + m;
  if (name == "nvidia-nvlink") return "/dev/nvidia-nvlink";
  return (name.empty() ? "nvidia" : name) + " " + std::to_string(major) + ":" + m;
}

Status HoldersFromScan(const ScanOutput& scan, std::vector<Holder>* holders, HolderScanInfo* info) {
  holders->clear();
  HolderScanInfo seen;
  std::map<int, std::set<std::string>> held;  // pid -> device names
  std::map<int, std::set<int>> minors;        // pid -> GPU device minors
  std::set<std::pair<int, int>> by_number;    // (pid, fd) found by number
  for (const DeviceFd& fd : scan.fds) {
    if (fd.major >= 0) by_number.insert({fd.pid, fd.fd});
  }
  std::set<int> driver_minors;  // the driver's own GPU list
  for (const auto& [bus_id, minor] : scan.minors) driver_minors.insert(minor);
  for (const DeviceFd& fd : scan.fds) {
    std::string name;
    int gpu = -1;
    if (fd.major >= 0) {
      name = DeviceName(fd.major, fd.minor, scan.majors);
      if (fd.major == 195 && fd.minor < 254) gpu = fd.minor;
    } else {
      if (by_number.count({fd.pid, fd.fd})) continue;  // the same fd, by number
      name = Neutralise(fd.path, '?');
      gpu = GpuIndexOfDevice(fd.path);
      // A plain file called /dev/nvidiaN (anyone can make one in a mount
      // namespace of their own) is a GPU only when the driver has minor N.
      if (gpu >= 0 && !driver_minors.empty() && !driver_minors.count(gpu)) continue;
    }
    held[fd.pid].insert(name);
    if (gpu >= 0) {
      minors[fd.pid].insert(gpu);
      seen.device_gpus = std::max(seen.device_gpus, gpu + 1);
    }
  }
  std::vector<Holder> found;
  for (const auto& [pid, names] : held) {
    Holder h;
    bool described = false;
    Status status = Describe(scan, pid, &h, &described);
    if (!status.ok()) return status;
    if (!described) {
      seen.gone.push_back(pid);
      continue;
    }
    h.devices.assign(names.begin(), names.end());
    h.gpus.assign(minors[pid].begin(), minors[pid].end());
    found.push_back(std::move(h));
  }
  *holders = std::move(found);
  if (info != nullptr) *info = std::move(seen);
  return Status::Ok();
}

std::map<int, Holder> DescribeProcesses(const ScanOutput& scan, const std::vector<int>& pids) {
  std::map<int, Holder> described;
  for (int pid : pids) {
    Holder h;
    bool found = false;
    if (Describe(scan, pid, &h, &found).ok() && found) described[pid] = h;
  }
  return described;
}

Status ParseProcStat(const std::string& stat, Holder* holder) {
  size_t open = stat.find(" (");
  size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return Status::Error(ErrorKind::kParse, "proc stat: missing \"(comm)\"");
  }
  std::vector<std::string> fields;
  std::stringstream rest(stat.substr(close + 1));
  std::string field;
  while (rest >> field) fields.push_back(field);
  if (fields.size() < 20) {
    return Status::Error(ErrorKind::kParse,
                         "proc stat: expected at least 20 fields after "
                         "comm, got " +
                             std::to_string(fields.size()));
  }
  int pid = 0, ppid = 0;
  uint64_t start_time = 0, ppid_value = 0;
  if (!ParsePid(stat.substr(0, open), &pid)) {
    return Status::Error(ErrorKind::kParse, "proc stat: bad pid");
  }
  if (fields[0].size() != 1) return Status::Error(ErrorKind::kParse, "proc stat: bad state");
  if (!ParseUnsigned(fields[1], 0x3fffffff, &ppid_value)) {
    return Status::Error(ErrorKind::kParse, "proc stat: bad ppid");
  }
  ppid = static_cast<int>(ppid_value);
  if (!ParseUnsigned(fields[19], UINT64_MAX, &start_time)) {  // field 22
    return Status::Error(ErrorKind::kParse, "proc stat: bad start time");
  }
  uint64_t flags = 0;
  if (!ParseUnsigned(fields[6], UINT32_MAX, &flags)) {  // field 9
    return Status::Error(ErrorKind::kParse, "proc stat: bad flags");
  }
  holder->flags = static_cast<unsigned>(flags);
  holder->pid = pid;
  holder->comm = Neutralise(stat.substr(open + 2, close - open - 2), '?');
  holder->state = fields[0][0];
  holder->ppid = ppid;
  holder->start_time = start_time;
  return Status::Ok();
}

bool SeesHostPidNamespace(const ScanOutput& scan) {
  if (scan.pid_namespace.empty()) return false;
  if (scan.pid_namespace == "pid:[4026531836]") return true;
  return scan.has_pid_marker && Trim(scan.pid_marker) == scan.pid_namespace;
}

int GpuIndexOfDevice(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.size() <= 6 || base.size() > 10 || base.compare(0, 6, "nvidia") != 0) return -1;
  uint64_t index = 0;
  if (!ParseUnsigned(base.substr(6), 9999, &index)) return -1;
  return static_cast<int>(index);
}

}  // namespace fleetreap
