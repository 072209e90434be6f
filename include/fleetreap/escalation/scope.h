// Scope rules: parsing a --gpus list, the scope of a Slurm job, and whether
// a holder or a GPU is inside a run's Scope (model/scope.h says what a scope
// is). A holder outside the scope is reported and never signalled. Pure
// functions; thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/scope.h"

namespace fleetreap {

struct Holder;
struct GpuReading;

/// Parses a GPU list: "0,2,5", "4-7", "0,2-3". kUsage naming "flag" on
/// anything else, or a list that is empty.
[[nodiscard]] Status ParseGpuList(const std::string& text, const std::string& flag,
                                  std::vector<int>* gpus);

/// The scope of a Slurm epilog or prolog from its environment values:
/// the job id (SLURM_JOB_ID) and its GPUs (SLURM_JOB_GPUS: device minors,
/// which are not always nvidia-smi's indexes, so gpus_are_minors is set;
/// "" leaves every GPU in scope). kUsage when the GPUs cannot be read.
[[nodiscard]] Status SlurmScope(const std::string& job_id, const std::string& job_gpus,
                                Scope* scope);

/// With gpus_are_minors: rewrites the scope's GPUs from device minors to
/// nvidia-smi indexes through the driver's minors ("minor_by_bus_id", the
/// scan's /proc/driver/nvidia/gpus/BUS/information) and the readings' bus
/// ids, and clears the flag. kCommandFailed naming the minor when one has
/// no known GPU ("SLURM_JOB_GPUS minor 3: no GPU of this host has device
/// minor 3 (the driver's minors: 0-2)"): judging another GPU would act on
/// another tenant's. Without the flag, does nothing.
[[nodiscard]] Status TranslateGpuMinors(const std::map<std::string, int>& minor_by_bus_id,
                                        const std::vector<GpuReading>& gpus, Scope* scope);

/// With a --gpus list of nvidia-smi indexes, a kCommandFailed error when an
/// index names no GPU of "gpus" (this host's, as nvidia-smi listed them):
///   --gpus 9-12: this host has no GPU 9-12 (its GPUs: 0-7)
/// A typo'd scope must fail the host, never leave it "clean" with every GPU
/// out of scope. Ok without a list, or while the list still holds device
/// minors (TranslateGpuMinors checks those).
[[nodiscard]] Status CheckGpuIndexes(const std::vector<GpuReading>& gpus, const Scope& scope);

/// Why "holder" is outside "scope" ("uses GPU 2, outside --gpus 4-7",
/// "cgroup /system.slice/x.service is outside /slurm/job_42", "not in Slurm
/// job 42 (slurm job 41)", "owned by Kubernetes pod UID 0f1e... (--spare-pods)"),
/// or "" when it is inside. The GPUs a holder uses
/// are those nvidia-smi charges it on, else the GPU device files it holds
/// (a CUDA process opens every GPU's file); one that uses none is outside a
/// GPU scope. An unknown cgroup is outside a cgroup or job scope, and
/// outside --spare-pods (a pod may own it).
std::string OutOfScopeReason(const Holder& holder, const Scope& scope);

/// Whether GPU "index" is in the scope (always, without a GPU list).
bool GpuInScope(int index, const Scope& scope);

/// After classification: a GPU outside the scope's list is kOutOfScope
/// ("outside --gpus 4-7"); without a list, under --cgroup or a Slurm job, a
/// busy GPU that only out-of-scope holders hold is kOutOfScope too (another
/// tenant's). With a list, a listed GPU that an out-of-scope holder uses
/// stays busy: the run's GPUs are not clean, and the holder is named; so
/// does a GPU that a spared pod holds (--spare-pods alone narrows no GPU:
/// the node is not empty while a pod sits on it).
void ApplyScopeToGpus(const Scope& scope, const std::vector<Holder>& holders,
                      std::vector<GpuReading>* gpus);

}  // namespace fleetreap
