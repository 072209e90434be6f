// Fuzzes ParseScanOutput + HoldersFromScan, and ParseProcStat.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/scan_output.h"
#include "fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fleetreap;  // NOLINT: entry point outside the namespace
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<Holder> holders;
  HolderScanInfo info;
  ScanOutput scan;
  Status status = ParseScanOutput(text, &scan);
  if (status.ok()) status = HoldersFromScan(scan, &holders, &info);
  FuzzCheck(status.ok() || holders.empty());
  for (const Holder& holder : holders) {
    FuzzCheck(holder.pid > 0 && !holder.devices.empty());
    for (int gpu : holder.gpus) FuzzCheck(gpu >= 0);
  }
  Holder holder;
  (void)ParseProcStat(text, &holder);
  GpuIndexOfDevice(text);
  return 0;
}
