// HostView folding: the pure steps that turn what a scan printed into the
// escalation's view of a host (escalation.h's HostView and TrackedHolder):
// merging a holder scan into the tracked holders, reading the GPUs nvidia-smi
// still reports next to a lost one, numbering that lost GPU, and telling
// ghost memory under protected daemons from memory a process uses. No I/O,
// no clock; thread-safe. host_cleaner.cc does the I/O around them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/escalation/escalation.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/escalation/protect.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/escalation/scope.h"
#include "fleetreap/escalation/unit_properties.h"

namespace fleetreap {

/// Folds one holder scan into "holders". A holder seen again (same PID and
/// start time) keeps its fate, protection and round and is present; a new one
/// gets round "waves" + 1 and is kProtected (with the reason) when "protect"
/// says so; one no longer seen is absent, with FateAfterExit as its fate
/// unless it is protected. A new holder that is not protected but lies
/// outside "scope" is kOutOfScope, with the reason in out_of_scope.
void MergeHolderScan(const std::vector<Holder>& scanned, const ProtectList& protect,
                     const Scope& scope, int waves, std::vector<TrackedHolder>* holders);

/// The playbook's active units that may be stopped; each other one goes to
/// "skipped" as "UNIT: reason": a unit whose name is protected
/// (unit_properties.h), whose cgroup holds fleetreap's own session
/// ("self_cgroup"), or which runs a protected holder (its main PID, or a
/// holder in its cgroup).
std::vector<std::string> UnitsSafeToStop(const std::vector<std::string>& active,
                                         const std::map<std::string, UnitProperties>& props,
                                         const std::string& self_cgroup,
                                         const std::vector<TrackedHolder>& holders,
                                         std::vector<std::string>* skipped);

/// nvidia-smi exits non-zero when a GPU is lost, yet still prints the other
/// GPUs' rows. Appends those rows (read with the lost-GPU lines taken out;
/// the header still proves the columns) to "gpus". Returns false when there
/// are none.
bool ReadRowsBesideLostGpus(const std::string& out, std::vector<GpuReading>* gpus);

/// nvidia-smi names a lost GPU by bus id only. When exactly one index below
/// "expected" has no reading and exactly one lost reading has no index, they
/// are the same GPU: gives the lost reading that index.
void NumberTheLostGpu(int expected, std::vector<GpuReading>* gpus);

/// Indexes of kBusy GPUs that no present unprotected holder holds: memory
/// that only protected daemons (which hold every GPU at 0 MiB) sit on.
std::vector<int> GpusHeldOnlyByProtected(const std::vector<TrackedHolder>& holders,
                                         const std::vector<GpuReading>& gpus);

/// Marks each GPU of "suspects" that no compute app uses (matched by UUID or
/// bus id) as kGhost, with a detail saying it needs a reset.
void MarkGhostsWithoutApps(const std::vector<int>& suspects,
                           const std::vector<ComputeApp>& apps,
                           std::vector<GpuReading>* gpus);

}  // namespace fleetreap
