// FleetPlan building: from the command line to the list of hosts to act on,
// each with its playbook. It reads the inventory (or makes the one local host
// of --local), applies --limit, and loads every playbook that a host or the
// command line names, once per file. Errors come back before any host is
// contacted: kInvalidInput for inventory and playbook files (exit 65), kUsage
// for a selection that matches nothing (exit 64). Thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/runner/fleet_runner.h"
#include "fleetreap/cli/options.h"
#include "fleetreap/base/status.h"

namespace fleetreap {

struct FleetPlanSet {
  std::vector<FleetPlan> plans;       // in inventory order
  std::string playbook_name;          // of --playbook or the default
  std::vector<std::string> warnings;  // "FILE:LINE:COL: text", for the log
  std::vector<std::string> notes;     // the same, for -v (ignored variables)
};

/// Builds the plans that "options" asks for.
Status BuildFleetPlans(const Options& options, FleetPlanSet* set);

}  // namespace fleetreap
