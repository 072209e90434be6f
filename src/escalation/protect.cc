#include "fleetreap/escalation/protect.h"

#include <fnmatch.h>

namespace fleetreap {

namespace {

// docs/protected-daemons.md has a row per entry, with sources.
constexpr const char* kDefaultEntries[] = {
    // The driver's daemons.
    "nvidia-persistenced",
    "nv-fabricmanager",
    "nvidia-fabricmanager",
    "nvlsm",
    "nvidia-gridd",
    "nvidia-topologyd",
    "nvidia-powerd",
    // DCGM, standalone or embedded in the exporter.
    "nv-hostengine",
    "dcgm-exporter",
    // MPS and IMEX.
    "nvidia-cuda-mps-control",
    "nvidia-cuda-mps-server",
    "mps-control-daemon",
    "nvidia-imex",
    "nvidia-imex-ctl",
    // The Kubernetes GPU operator's agents and the DRA driver.
    "nvidia-device-plugin",
    "config-manager",
    "gpu-feature-discovery",
    "nvidia-mig-manager",
    "nvidia-mig-parted",
    "nvidia-validator",
    "gpu-kubelet-plugin",
    "compute-domain-kubelet-plugin",
    "compute-domain-daemon",
    // DGX system management.
    "nvsm*",
    // Monitoring agents that hold NVML at 0 MiB: collectd's gpu_nvidia
    // plugin, the Datadog Agent's NVML check, Zabbix agent 2's NVIDIA
    // plugin, the Google Cloud Ops Agent's collector (its nvml receiver),
    // the NVML Prometheus exporters.
    "collectd",
    "/opt/datadog-agent/bin/agent/agent",
    "zabbix_agent2",
    "zabbix-agent2-plugin-nvidia-gpu",
    "otelopscol",
    "nvidia_gpu_prometheus_exporter",
    "nvidia_gpu_exporter",
    // Display servers, the way in, the tools fleetreap runs.
    "Xorg",
    "Xwayland",
    "gdm*",
    "sshd",
    "systemd",
    "nvidia-smi",
    "fuser",
};

constexpr size_t kCommLength = 15;
constexpr unsigned kPfKthread = 0x00200000;

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool Glob(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool IsPathEntry(const std::string& entry) { return entry.find('/') != std::string::npos; }

// The host's daemons run as root or a system account (below UID_MIN, 1000
// on every distribution fleetreap knows); a user may start a genuine daemon
// binary too (nvidia-cuda-mps-control -d, nv-hostengine), and then it is
// that user's job.
constexpr int kUidMin = 1000;

bool RunBySystemAccount(const Holder& holder) {
  if (holder.uid >= 0) return holder.uid < kUidMin;
  return holder.user == "root";
}

// A daemon of the host: a system account runs it, and no one's code was
// injected into it through the loader's environment.
bool HostDaemonProcess(const Holder& holder) {
  return RunBySystemAccount(holder) && !holder.preloaded;
}

bool EntryMatchesExe(const std::string& entry, const std::string& exe) {
  return IsPathEntry(entry) ? Glob(entry, exe) : Glob(entry, Basename(exe));
}

bool InSystemLocation(const std::string& exe) {
  // /nix/store: NixOS runs the driver's daemons from there (root's, read-only).
  for (const char* dir : {"/usr/", "/opt/", "/bin/", "/sbin/", "/nix/store/"}) {
    if (exe.rfind(dir, 0) == 0) return true;
  }
  return false;
}

// The kernel's comm is the executable name cut to 15 characters; an entry
// "could be" the comm when its (literal) name, cut the same way, is the comm.
bool EntryMatchesComm(const std::string& entry, const std::string& comm) {
  std::string name = Basename(entry);
  if (name.find_first_of("*?[") < 2) return false;  // "*" would match anything
  if (Glob(name, comm)) return true;
  return name.size() > kCommLength && name.substr(0, kCommLength) == comm;
}

bool ParsePid(const std::string& text, int* pid) {
  size_t start = text.find_first_not_of(" \t");
  size_t end = text.find_last_not_of(" \t\r\n");
  if (start == std::string::npos || end - start > 9) return false;
  int value = 0;
  for (size_t i = start; i <= end; ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value * 10 + (text[i] - '0');
  }
  *pid = value;
  return value > 1;
}

}  // namespace

std::string ExePath(const Holder& holder) {
  static const std::string kDeleted = " (deleted)";
  std::string exe = holder.exe;
  if (exe.size() > kDeleted.size() &&
      exe.compare(exe.size() - kDeleted.size(), kDeleted.size(), kDeleted) == 0) {
    exe.resize(exe.size() - kDeleted.size());
  }
  return exe;
}

bool ExeOwnedByRoot(const Holder& holder) {
  return holder.exe_uid == 0 && holder.exe_mode >= 0 && (holder.exe_mode & 022) == 0;
}

ProtectList ProtectList::Default() {
  ProtectList list;
  for (const char* entry : kDefaultEntries) list.Add(entry);
  return list;
}

void ProtectList::Add(const std::string& entry) {
  if (entry.empty()) return;
  for (const std::string& existing : entries_) {
    if (existing == entry) return;
  }
  entries_.push_back(entry);
}

void ProtectList::AddAll(const std::vector<std::string>& entries) {
  for (const std::string& entry : entries) Add(entry);
}

void ProtectList::SetSession(int shell_pid, const std::set<int>& ancestors) {
  shell_pid_ = shell_pid;
  ancestors_ = ancestors;
  ancestors_.erase(1);
}

void ProtectList::SetPidFiles(const std::map<int, std::string>& contents) {
  pid_daemons_.clear();
  const std::vector<DaemonPidFile>& files = DaemonPidFiles();
  for (const auto& [index, text] : contents) {
    int pid = 0;
    if (index >= 0 && static_cast<size_t>(index) < files.size() && ParsePid(text, &pid)) {
      pid_daemons_[pid] = files[index].daemon;
    }
  }
}

ProtectDecision ProtectList::Judge(const Holder& holder) const {
  ProtectDecision decision;
  if (holder.pid == 1) return {"pid 1", ""};
  if (holder.pid == 2 || (holder.flags & kPfKthread) != 0) return {"kernel thread", ""};
  if (shell_pid_ > 0 && (holder.pid == shell_pid_ || holder.ppid == shell_pid_)) {
    return {"fleetreap session", ""};
  }
  if (ancestors_.count(holder.pid)) return {"fleetreap session", ""};
  // An unreadable exe proves nothing: its comm is the process's to choose.
  std::string exe = ExePath(holder);
  if (exe.empty()) return decision;
  for (const std::string& entry : entries_) {
    if (!EntryMatchesExe(entry, exe)) continue;
    if (ExeOwnedByRoot(holder) && (IsPathEntry(entry) || InSystemLocation(exe)) &&
        HostDaemonProcess(holder)) {
      return {entry, ""};
    }
    if (decision.named_like.empty()) decision.named_like = entry;
  }
  // A root-owned PID file of a daemon names this process, and it is that
  // daemon (outside the system folders): a root-owned executable of its
  // name, whose name the kernel cut.
  auto daemon = pid_daemons_.find(holder.pid);
  if (daemon != pid_daemons_.end() && ExeOwnedByRoot(holder) && HostDaemonProcess(holder) &&
      EntryMatchesExe(daemon->second, exe) && EntryMatchesComm(daemon->second, holder.comm)) {
    return {daemon->second + " (pid file)", ""};
  }
  return decision;
}

}  // namespace fleetreap
