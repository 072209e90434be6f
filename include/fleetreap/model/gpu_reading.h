// GpuReading: what nvidia-smi says about one GPU, and the state fleetreap
// classifies it into (escalation/gpu_state.h). Part of the host model that the
// parsers fill, the escalation reads and the reports render. Plain values;
// thread-compatible.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fleetreap {

/// The state of one GPU after classification (see gpu_state.h).
enum class GpuState {
  kClean,          // memory.used at or below the threshold
  kBusy,           // held by non-protected processes
  kProtectedOnly,  // held only by protected daemons, under the threshold
  kGhost,          // over the threshold with no holder: needs a reset
  kLost,           // nvidia-smi cannot reach it
  kMissing,        // expected by the inventory but absent
  kUnknown,        // the value could not be read
  kRecovery,       // the driver asks for a recovery action (gpu_recovery_action)
  kOutOfScope,     // outside the run's scope (--gpus), or held only by others' jobs
};
const char* GpuStateName(GpuState state);

/// Whether a GPU in this state lets its host be clean: clean,
/// protected_only or out_of_scope.
bool GpuStateIsClean(GpuState state);

struct GpuReading {
  int index = -1;
  std::string uuid;
  std::string name;
  std::string bus_id;
  std::optional<int64_t> used_mib;  // nullopt: unknown ([N/A] and friends)
  std::optional<int64_t> total_mib;
  GpuState state = GpuState::kUnknown;
  std::string detail;  // e.g. the "GPU is lost" message
  /// nvidia-smi's gpu_recovery_action as printed ("None", "Reset", "Reboot",
  /// "Drain P2P", "Drain and Reset"; control bytes escaped, capped), "" when
  /// not queried (older drivers reject the field) or unknown ("[N/A]").
  /// Anything but "None" or "" keeps the GPU from being clean (gpu_state.h).
  std::string recovery_action;
};

}  // namespace fleetreap
