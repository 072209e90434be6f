// GpuReading: what nvidia-smi says about one GPU, and the state fleetreap
// classifies it into (escalation/gpu_state.h); ComputeApp, a process nvidia-smi
// charges memory to; and the names every area gives them (GpuLabel, bus ids).
// Part of the host model that the parsers fill, the escalation reads and the
// reports render. Plain values and pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

/// One row of --query-compute-apps: a process with a CUDA context.
struct ComputeApp {
  std::optional<int> pid;    // nullopt: "[Not Supported]" (old drivers)
  std::string process_name;  // may hold spaces and commas
  std::string gpu_uuid;
  std::string gpu_bus_id;
  std::optional<int64_t> used_mib;  // nullopt: "[N/A]" (WDDM, MIG)
};

/// True for a PCI bus id as nvidia-smi prints one: 4-8 hex digits of domain,
/// then ":BB:DD.F" ("0000:0B:00.0", "00000000:0b:00.0").
bool LooksLikeBusId(const std::string& id);

/// Normalises a PCI bus id for comparison: upper-case hex, domain widened to
/// 8 digits ("0000:0b:00.0" -> "00000000:0B:00.0").
std::string NormalizeBusId(const std::string& bus_id);

/// The GPU's name for people: "GPU 3" by its nvidia-smi index, else by the
/// bus id nvidia-smi printed ("GPU 0000:B1:00.0", a lost GPU it could not
/// number), else "GPU ?". Every report names GPUs this way.
std::string GpuLabel(const GpuReading& gpu);

/// True when nvidia-smi's gpu_recovery_action names an action: anything but
/// "None" (any case), "" (not queried), "N/A" and bracketed unknowns
/// ("[N/A]"). "Reset", "Reboot", "Drain P2P", "Drain and Reset", and any
/// spelling a later driver adds, are actions.
bool DriverAsksForRecovery(const GpuReading& gpu);

/// True only when "gpus" is non-empty and every reading lets its host be
/// clean (GpuStateIsClean: kClean, kProtectedOnly or kOutOfScope; a GPU whose
/// driver asks for recovery is none of them). Call after ClassifyGpus, which
/// adds the missing GPUs.
bool HostGpusClean(const std::vector<GpuReading>& gpus);

/// True when "gpus" is non-empty and every reading is clean (HostGpusClean's
/// rule) or only asks for a recovery action (kRecovery) with its memory read
/// and at or below "threshold_mib": empty, though not ready for the next job
/// (the readiness finding names the action).
bool HostGpusEmpty(const std::vector<GpuReading>& gpus, int64_t threshold_mib);

}  // namespace fleetreap
