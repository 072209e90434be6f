// Fuzzes ParseComputeApps, with the scan's own fields (ScanAppsFields) or
// the long list.
#include <cstddef>
#include <cstdint>

#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/remote/scan_script.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  static const std::vector<std::string> kLong = {"timestamp",    "gpu_name",       "gpu_bus_id",
                                                 "gpu_serial",   "gpu_uuid",       "pid",
                                                 "process_name", "used_gpu_memory"};
  FuzzInput input = SplitFuzzInput(data, size);
  std::vector<ComputeApp> apps;
  NvidiaSmiFailure failure = NvidiaSmiFailure::kNone;
  const std::vector<std::string>& fields = input.err.size() % 2 ? kLong : ScanAppsFields();
  Status status = ParseComputeApps(input.out, input.err, input.exit_code, fields, &apps, &failure);
  FuzzCheck(status.ok() || apps.empty());
  FuzzCheck(input.exit_code == 0 || !status.ok());
  for (const ComputeApp& app : apps) {
    FuzzCheck(!app.pid || *app.pid >= 0);
    FuzzCheck(!app.used_mib || *app.used_mib >= 0);
  }
  return 0;
}
