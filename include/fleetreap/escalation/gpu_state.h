// GpuState classification: gives every GPU of a host exactly one GpuState
// (model/gpu_reading.h) from nvidia-smi's readings, the device holders and
// the inventory's expected GPU count. Whether the host is clean
// (HostGpusClean) and the GPUs' names are model functions. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"

namespace fleetreap {

/// True when "holder" still holds its devices: its fate is not kTerminated,
/// kKilled or kGone.
bool HolderStillPresent(const Holder& holder);

/// Rewrites each holder's "gpus" from device minor numbers (the N of
/// /dev/nvidiaN, as ParseHolderScan reports them) to nvidia-smi indexes. The
/// two usually agree but need not: the minor follows the driver's probe
/// order, the index the PCI bus order. "minor_by_bus_id" (HolderScanInfo::
/// minors) and the bus ids of "gpus" link them; a minor with no link keeps its
/// number. Call once per scan, before ClassifyGpus.
void MapHolderGpusToIndexes(const std::map<std::string, int>& minor_by_bus_id,
                            const std::vector<GpuReading>& gpus, std::vector<Holder>* holders);

/// Sets state and detail of every reading in "gpus", in this order:
///  - kLost: already kLost (from ParseGpuQuery); left as is.
///  - kBusy: a present, non-protected holder holds /dev/nvidiaINDEX (with
///    "; driver asks for recovery: Reset" added when it does).
///  - kRecovery: the driver asks for a recovery action, whatever the memory:
///    "driver asks for recovery: Reset (0 MiB used)". Freeing memory cannot
///    make such a GPU fit for work; only the action can.
///  - kBusy: over "threshold_mib" and held only by protected daemons (detail
///    says so: the memory is in use, yet fleetreap may not free it).
///  - kUnknown: memory.used could not be read.
///  - kGhost: memory.used > threshold_mib and no present holder.
///  - kProtectedOnly: at or under the threshold, held only by protected
///    holders (fate kProtected).
///  - kClean: at or under the threshold, no holder.
/// When "expected_gpus" > 0, each index in [0, expected_gpus) without a
/// reading gets a kMissing reading, except that lost readings with no index
/// stand in for absent indexes first. Readings end sorted by index (-1 last).
/// Holders with no GPU index (only nvidiactl, nvidia-uvm) touch no GPU.
/// "allowances" (the playbook's daemon_allowance_mib: a protected entry's
/// name, as Holder::protected_by names it, to MiB) lets a protected
/// daemon's own context count as clean: a GPU over the threshold, held only
/// by protected holders, whose memory.used is at most the threshold plus the
/// allowances of the daemons on it, is kProtectedOnly, its detail naming
/// them and the allowance (the MPS server keeps ~70 MiB once its clients are
/// gone); above it, kBusy as before.
void ClassifyGpus(const std::vector<Holder>& holders, int expected_gpus, int64_t threshold_mib,
                  std::vector<GpuReading>* gpus,
                  const std::map<std::string, int64_t>& allowances = {});

}  // namespace fleetreap
