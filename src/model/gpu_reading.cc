#include "fleetreap/model/gpu_reading.h"

#include <algorithm>
#include <cctype>

#include "fleetreap/base/text.h"

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

bool LooksLikeBusId(const std::string& id) {
  auto hex = [](char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; };
  size_t colon = id.find(':');
  if (colon < 4 || colon > 8 || id.size() != colon + 8) return false;
  for (size_t i = 0; i < colon; ++i) {
    if (!hex(id[i])) return false;
  }
  // After the domain: ":BB:DD.F".
  for (size_t k = 0; k < 8; ++k) {
    const char c = id[colon + k];
    const bool ok = (k == 0 || k == 3) ? c == ':' : k == 6 ? c == '.' : hex(c);
    if (!ok) return false;
  }
  return true;
}

std::string NormalizeBusId(const std::string& bus_id) {
  std::string id = Trim(bus_id);
  for (char& c : id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (!LooksLikeBusId(id)) return id;
  size_t colon = id.find(':');
  return std::string(8 - colon, '0') + id;
}

std::string GpuLabel(const GpuReading& gpu) {
  if (gpu.index >= 0) return "GPU " + std::to_string(gpu.index);
  return "GPU " + (gpu.bus_id.empty() ? std::string("?") : gpu.bus_id);
}

bool DriverAsksForRecovery(const GpuReading& gpu) {
  const std::string& action = gpu.recovery_action;
  if (action.empty() || action == "N/A") return false;
  if (action.front() == '[' && action.back() == ']') return false;  // [N/A], [Unknown Error]
  std::string lower;
  for (char c : action) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower != "none";
}

bool HostGpusClean(const std::vector<GpuReading>& gpus) {
  if (gpus.empty()) return false;
  return std::all_of(gpus.begin(), gpus.end(),
                     [](const GpuReading& gpu) { return GpuStateIsClean(gpu.state); });
}

bool HostGpusEmpty(const std::vector<GpuReading>& gpus, int64_t threshold_mib) {
  if (gpus.empty()) return false;
  return std::all_of(gpus.begin(), gpus.end(), [threshold_mib](const GpuReading& gpu) {
    if (GpuStateIsClean(gpu.state)) return true;
    return gpu.state == GpuState::kRecovery && gpu.used_mib && *gpu.used_mib <= threshold_mib;
  });
}

}  // namespace fleetreap
