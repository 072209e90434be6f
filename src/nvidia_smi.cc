#include "fleetreap/nvidia_smi.h"

namespace fleetreap {

const char* NvidiaSmiFailureName(NvidiaSmiFailure failure) {
  switch (failure) {
    case NvidiaSmiFailure::kNone: return "none";
    case NvidiaSmiFailure::kDriverNotLoaded: return "driver_not_loaded";
    case NvidiaSmiFailure::kVersionMismatch: return "version_mismatch";
    case NvidiaSmiFailure::kNoDevices: return "no_devices";
    case NvidiaSmiFailure::kInsufficientPermissions: return "insufficient_permissions";
    case NvidiaSmiFailure::kNvmlUnknownError: return "nvml_unknown_error";
    case NvidiaSmiFailure::kGpuLost: return "gpu_lost";
    case NvidiaSmiFailure::kOther: return "other";
  }
  return "other";
}

bool ParseLostGpuLine(const std::string&, LostGpu*) { return false; }

NvidiaSmiFailure ClassifyNvidiaSmiFailure(const std::string&, const std::string&,
                                          int exit_code, std::string*) {
  return exit_code == 0 ? NvidiaSmiFailure::kNone : NvidiaSmiFailure::kOther;
}

std::string NormalizeBusId(const std::string& bus_id) { return bus_id; }

const std::vector<std::string>& GpuQueryFields() {
  static const std::vector<std::string> kFields = {
      "index", "uuid", "name", "pci.bus_id", "memory.used", "memory.total"};
  return kFields;
}

std::string GpuQueryCommand() { return "nvidia-smi"; }
std::string GpuQueryCommandForGpu(int) { return "nvidia-smi"; }

Status ParseGpuQuery(const std::string&, const std::string&, int,
                     const std::vector<std::string>&, GpuQueryResult*) {
  return Status::Error(ErrorKind::kInternal, "not implemented");
}

const std::vector<std::string>& ComputeAppsFields() {
  static const std::vector<std::string> kFields = {
      "gpu_uuid", "gpu_bus_id", "pid", "used_gpu_memory", "process_name"};
  return kFields;
}

std::string ComputeAppsCommand() { return "nvidia-smi"; }

Status ParseComputeApps(const std::string&, const std::string&, int,
                        const std::vector<std::string>&,
                        std::vector<ComputeApp>*, NvidiaSmiFailure*) {
  return Status::Error(ErrorKind::kInternal, "not implemented");
}

}  // namespace fleetreap
