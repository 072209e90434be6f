#include "fleetreap/protect.h"

#include <fnmatch.h>

namespace fleetreap {

namespace {

constexpr const char* kDefaultEntries[] = {
    "nvidia-persistenced",     "nv-hostengine",
    "dcgm-exporter",           "nv-fabricmanager",
    "nvidia-fabricmanager",    "nvidia-imex",
    "nvidia-cuda-mps-control", "nvidia-cuda-mps-server",
    "Xorg",                    "Xwayland",
    "gdm*",                    "sshd",
    "systemd",                 "nvidia-smi",
    "fuser",
};

constexpr size_t kCommLength = 15;

std::string Basename(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool Glob(const std::string& pattern, const std::string& text) {
  return fnmatch(pattern.c_str(), text.c_str(), 0) == 0;
}

bool EntryMatchesExe(const std::string& entry, const std::string& exe) {
  if (entry.find('/') != std::string::npos) return Glob(entry, exe);
  return Glob(entry, Basename(exe));
}

// The kernel's comm is the executable name cut to 15 characters; an entry
// "could be" the comm when its (literal) name, cut the same way, is the comm.
bool EntryMatchesComm(const std::string& entry, const std::string& comm) {
  std::string name = Basename(entry);
  if (name.find_first_of("*?[") < 2) return false;  // "*" would match anything
  if (Glob(name, comm)) return true;
  return name.size() > kCommLength && name.substr(0, kCommLength) == comm;
}

}  // namespace

std::string ExePath(const Holder& holder) {
  static const std::string kDeleted = " (deleted)";
  std::string exe = holder.exe;
  if (exe.size() > kDeleted.size() &&
      exe.compare(exe.size() - kDeleted.size(), kDeleted.size(), kDeleted) ==
          0) {
    exe.resize(exe.size() - kDeleted.size());
  }
  return exe;
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

std::string ProtectList::Reason(const Holder& holder) const {
  if (holder.pid == 1) return "pid 1";
  if (holder.pid <= 2 || holder.ppid == 2) return "kernel thread";
  if (shell_pid_ > 0 &&
      (holder.pid == shell_pid_ || holder.ppid == shell_pid_)) {
    return "fleetreap session";
  }
  if (ancestors_.count(holder.pid)) return "fleetreap session";
  std::string exe = ExePath(holder);
  if (!exe.empty()) {
    for (const std::string& entry : entries_) {
      if (EntryMatchesExe(entry, exe)) return entry;
    }
    return "";
  }
  // The exe is unreadable: err on the side of not signalling.
  for (const std::string& entry : entries_) {
    if (EntryMatchesComm(entry, holder.comm)) return entry + " (by comm)";
  }
  return "";
}

}  // namespace fleetreap
