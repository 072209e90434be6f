// Fuzzes ParseXidLog (kernel log text, hostile process names in it), then
// decides readiness from the events it found.
#include <cstddef>
#include <cstdint>

#include "fleetreap/escalation/readiness.h"
#include "fleetreap/model/pci_bus_id.h"
#include "fleetreap/remote/xid_log.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  FuzzInput input = SplitFuzzInput(data, size);
  XidLog log;
  ParseXidLog(input.out, &log);
  FuzzCheck(log.events.size() <= kMaxXidEvents);
  FuzzCheck(log.malformed >= 0 && log.malformed <= log.lines);
  HostHealth health;
  health.kernel_log = KernelLogState::kRead;
  for (const XidEvent& event : log.events) {
    FuzzCheck(event.count >= 1 && event.code >= 0 && event.code <= 9999);
    FuzzCheck(event.message.size() <= kMaxXidMessage + 3);
    FuzzCheck(event.message.find('\n') == std::string::npos);
    health.xids.push_back(event);
    FuzzCheck(SamePciDevice(event.bus_id, input.err) == SamePciDevice(input.err, event.bus_id));
  }
  GpuReading gpu;
  gpu.index = 0;
  gpu.bus_id = input.err;
  for (const ReadinessFinding& finding : DecideReadiness(health, {gpu}, ReadyPolicy())) {
    FuzzCheck(FindingText(finding).find('\n') == std::string::npos);
  }
  return 0;
}
