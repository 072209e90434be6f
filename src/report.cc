#include "fleetreap/report.h"

namespace fleetreap {

const char* GpuStateName(GpuState state) {
  switch (state) {
    case GpuState::kClean: return "clean";
    case GpuState::kBusy: return "busy";
    case GpuState::kProtectedOnly: return "protected_only";
    case GpuState::kGhost: return "ghost";
    case GpuState::kLost: return "lost";
    case GpuState::kMissing: return "missing";
    case GpuState::kUnknown: return "unknown";
    case GpuState::kRecovery: return "needs_recovery";
    case GpuState::kOutOfScope: return "out_of_scope";
  }
  return "unknown";
}

bool GpuStateIsClean(GpuState state) {
  return state == GpuState::kClean || state == GpuState::kProtectedOnly ||
         state == GpuState::kOutOfScope;
}

const char* HolderFateName(HolderFate fate) {
  switch (fate) {
    case HolderFate::kObserved: return "observed";
    case HolderFate::kTerminated: return "terminated";
    case HolderFate::kKilled: return "killed";
    case HolderFate::kGone: return "gone";
    case HolderFate::kProtected: return "protected";
    case HolderFate::kUnkillable: return "unkillable";
    case HolderFate::kWouldTerm: return "would_term";
    case HolderFate::kWouldKill: return "would_kill";
    case HolderFate::kOutOfScope: return "out_of_scope";
  }
  return "observed";
}

bool NeverSignalled(HolderFate fate) {
  return fate == HolderFate::kProtected || fate == HolderFate::kUnkillable ||
         fate == HolderFate::kOutOfScope;
}

const char* HostStatusName(HostStatus status) {
  switch (status) {
    case HostStatus::kClean: return "clean";
    case HostStatus::kDirty: return "dirty";
    case HostStatus::kUnreachable: return "unreachable";
    case HostStatus::kFailed: return "failed";
  }
  return "failed";
}

int ExitCodeFor(const RunReport& report) {
  int code = 0;
  for (const HostReport& host : report.hosts) {
    switch (host.status) {
      case HostStatus::kClean: break;
      case HostStatus::kDirty:
        if (!report.dry_run) code |= 1;
        break;
      case HostStatus::kUnreachable:
      case HostStatus::kFailed:
        code |= 2;
        break;
    }
  }
  // Hosts never started were selected and are not known to be clean.
  if (!report.not_started.empty()) code |= 2;
  return code;
}

}  // namespace fleetreap
