#include "fleetreap/proc_scan.h"

namespace fleetreap {

std::string HolderScanScript() { return "echo 'fleetreap-holders 1 proc'; echo end\n"; }

Status ParseHolderScan(const std::string&, std::vector<Holder>*,
                       HolderScanInfo*) {
  return Status::Error(ErrorKind::kInternal, "not implemented");
}

Status ParseProcStat(const std::string&, Holder*) {
  return Status::Error(ErrorKind::kInternal, "not implemented");
}

int GpuIndexOfDevice(const std::string&) { return -1; }

}  // namespace fleetreap
