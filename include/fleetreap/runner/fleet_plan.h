// FleetPlan: one host to act on with its playbook, and BuildFleetPlans, which
// makes the list from a FleetPlanRequest. It reads the inventory (or makes
// the one local host of --local), applies --limit, and loads every playbook
// that a host or the request names, once per file. Errors come back before
// any host is contacted: kInvalidInput for inventory and playbook files
// (exit 65), kUsage for a selection that matches nothing (exit 64); a
// --limit @FILE whose file names no host gives no plans and a warning.
// Thread-compatible.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/escalation/playbook.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/inventory/inventory.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

struct FleetPlan {
  Host host;
  /// Never null: --playbook's, else the host's fleetreap_playbook, else
  /// DefaultPlaybook() (not owned).
  std::shared_ptr<const Playbook> playbook{std::shared_ptr<const Playbook>(), &DefaultPlaybook()};
};

/// What to plan: the hosts (an inventory with a --limit, or this machine)
/// and what the command line overrides for each.
struct FleetPlanRequest {
  bool local = false;  // --local: this machine, no inventory
  /// --hosts / -i, in order: inventory sources (LoadInventorySources), or
  /// one Slurm spec.
  std::vector<std::string> hosts;
  std::string limit;     // --limit: selects from "hosts"
  std::string nodes;     // --nodes: ClusterShell node set of hosts in no inventory
  std::string exclude;   // --exclude: node set left out of the selection
  std::string playbook;  // --playbook; "" = each host's own, else the default
  bool become = false;   // --become: every host becomes
  /// Bounds sinfo for a Slurm spec, and each inventory script.
  std::chrono::milliseconds command_timeout{60000};
};

struct FleetPlanSet {
  std::vector<FleetPlan> plans;       // in inventory order
  std::string playbook_name;          // of --playbook or the default
  std::vector<std::string> warnings;  // "FILE:LINE:COL: text" (or why no host), for the log
  std::vector<std::string> notes;     // the same, for -v (ignored variables)
};

/// Builds the plans that "request" asks for. --playbook wins over a host's
/// fleetreap_playbook, and --become over a host's become = false, as a command
/// line wins over inventory variables everywhere else; both are applied here
/// and only here (plan.host.become and plan.host.playbook are the run's). Each playbook file is
/// loaded once, however many hosts name it, and shared by their plans.
Status BuildFleetPlans(const FleetPlanRequest& request, FleetPlanSet* set);

/// `--hosts slurm:PARTITION`: runs SinfoCommand through "runner" (bounded by
/// "timeout"; BuildFleetPlans passes a LocalTransport, tests a fake) and
/// builds "inventory" from its output (SlurmInventory). kUsage for a bad
/// partition name (SlurmPartition); kInvalidInput when sinfo is missing,
/// fails (its first stderr line quoted) or lists nothing, e.g.
///   slurm:gpu: sinfo not found (fleetreap runs it where Slurm's commands work)
///   slurm:gpu: sinfo failed (exit 1): "sinfo: error: invalid partition specified: gpu"
Status LoadSlurmHosts(const std::string& spec, Transport* runner, std::chrono::milliseconds timeout,
                      Inventory* inventory);

}  // namespace fleetreap
