// SlurmHosts: `--hosts slurm:PARTITION`, the nodes of a Slurm partition as
// an Inventory, so that the SSH path selects them (--limit, --list-hosts,
// --failed-hosts) as it selects an inventory's hosts. The nodes come from
// `sinfo` on the machine fleetreap runs on (a login node): this module names
// the command and reads its output; the runner runs it (LoadSlurmHosts in
// runner/fleet_plan.h). Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/inventory/inventory.h"

namespace fleetreap {

/// True for a --hosts value that names a Slurm partition ("slurm:gpu").
bool IsSlurmHostsSpec(const std::string& hosts);

/// The command that lists the nodes of "partition", one per line:
/// sinfo --noheader --Node --partition='gpu' --format=%N
std::string SinfoCommand(const std::string& partition);

/// Reads sinfo's node-per-line output: names in order, each once (a node
/// in several states is listed once per state), blank lines skipped.
/// kInvalidInput naming "spec" when a line is not a node name or there is
/// none:
///   slurm:gpu: sinfo lists no node in partition gpu
///   slurm:gpu: sinfo printed "gpu01 idle", not a node name
Status ParseSinfoNodes(const std::string& spec, const std::string& text,
                       std::vector<std::string>* nodes);

/// The partition "spec" names ("slurm:gpu": "gpu"). kUsage for a name that
/// is not [A-Za-z0-9_.-]+, or is "all" or "ungrouped":
///   --hosts slurm:gpu;reboot: expected slurm:PARTITION (letters, digits, '-', '_', '.')
[[nodiscard]] Status SlurmPartition(const std::string& spec, std::string* partition);

/// The inventory of a partition's "nodes" (ParseSinfoNodes' list): one host
/// per node, address its name (so DNS and --ssh-config resolve it), port 22,
/// in groups "all" and the partition; path() is "spec".
Inventory SlurmInventory(const std::string& spec, const std::vector<std::string>& nodes);

}  // namespace fleetreap
