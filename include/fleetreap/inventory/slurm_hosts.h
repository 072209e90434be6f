// SlurmHosts: `--hosts slurm:PARTITION`, the nodes of a Slurm partition as
// an Inventory, so that the SSH path selects them (--limit, --list-hosts,
// --failed-hosts) as it selects an inventory's hosts. The nodes come from
// `sinfo` on the machine fleetreap runs on (a login node), run through a
// Transport: LocalTransport in fleetreap, a fake in tests. Thread-compatible.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/inventory/inventory.h"
#include "fleetreap/transport/transport.h"

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

/// Runs SinfoCommand through "runner" (bounded by "timeout") and builds
/// "inventory": one host per node, address its name (so DNS and
/// --ssh-config resolve it), port 22, in groups "all" and PARTITION;
/// inventory->path() is "spec". kUsage for a partition name that is not
/// [A-Za-z0-9_.-]+; kInvalidInput when sinfo is missing, fails (its first
/// stderr line quoted) or lists nothing, e.g.
///   slurm:gpu: sinfo not found (fleetreap runs it where Slurm's commands work)
///   slurm:gpu: sinfo failed (exit 1): "sinfo: error: invalid partition specified: gpu"
Status LoadSlurmHosts(const std::string& spec, Transport* runner, std::chrono::milliseconds timeout,
                      Inventory* inventory);

}  // namespace fleetreap
