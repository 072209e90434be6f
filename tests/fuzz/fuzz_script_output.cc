// Fuzzes the parsers of what fleetreap's own remote scripts print
// (the step headers: scan_output.h, signal.h...): a host may print anything at all.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/signal.h"
#include "fleetreap/remote/stop_units.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  std::string text(reinterpret_cast<const char*>(data), size);
  ScanOutput scan;
  if (ParseScanOutput(text, &scan).ok()) {
    for (const ChildProcess& child : scan.children) FuzzCheck(child.pid > 0 && child.parent > 0);
    FuzzCheck(scan.fabric_manager == -1 || scan.nvswitches > 0);
    FuzzCheck(scan.kmsg_exit >= -1 && scan.kmsg_exit <= 1);
  }
  std::vector<PerGpuQuery> queries;
  (void)ParsePerGpuQueryOutput(text, &queries);
  std::vector<UnitStop> stops;
  (void)ParseStopUnitsOutput(text, {"a.service", "b.service"}, &stops);
  SignalReply signal;
  if (ParseSignalOutput(text, &signal).ok()) {
    for (const auto& left : signal.left) FuzzCheck(left.second != '\0');
  }
  ShmOutput shm;
  (void)ParseShmOutput(text, &shm);
  std::vector<GpuReset> resets;
  (void)ParseGpuResetOutput(text, &resets);
  return 0;
}
