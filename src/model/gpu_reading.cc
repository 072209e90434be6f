#include "fleetreap/model/gpu_reading.h"

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

}  // namespace fleetreap
