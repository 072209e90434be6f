// StopUnits: the stop-units step, its script and the parser of its reply.
// The stops followed by a signal wave in one round trip: batch.h.
// Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/remote/audit.h"

namespace fleetreap {

/// Stops each unit with "systemctl stop", each bounded by "timeout". Prints
/// "stop I RC" per unit, I being its index in "units", then (with
/// "audit"'s run id) "audit N RC" for the lines "action=stop_unit unit=U
/// rc=RC", then "end". The stops followed by a signal wave in one round
/// trip: batch.h.
std::string StopUnitsScript(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout,
                            const AuditRequest& audit = AuditRequest());

struct UnitStop {
  std::string unit;
  int exit_code = -1;
};
/// Parses StopUnitsScript(units, ...)'s stdout; "units" names the indexes.
/// "audit" (may be null) gets the stops' audit outcome.
[[nodiscard]] Status ParseStopUnitsOutput(const std::string& out,
                                          const std::vector<std::string>& units,
                                          std::vector<UnitStop>* stops,
                                          AuditOutcome* audit = nullptr);

}  // namespace fleetreap
