#include "fleetreap/host_cleaner.h"

namespace fleetreap {

HostReport CleanHost(Transport&, const HostJob&) {
  HostReport report;
  report.status = HostStatus::kFailed;
  report.error_kind = ErrorKind::kInternal;
  report.error_message = "escalation not implemented yet";
  return report;
}

}  // namespace fleetreap
