// Scope: which part of a host a run may act on, for nodes other jobs share.
// --gpus limits it to holders whose GPUs are all in a list; --cgroup to
// processes in a cgroup subtree; --spare-pods leaves out every process that a
// Kubernetes pod owns (its cgroup names the pod); under Slurm (SLURM_JOB_ID
// set, as in an epilog) --local defaults to the job's processes and GPUs. A
// holder outside the scope is reported and never signalled. The command line
// fills it (cli/wiring), the escalation applies it (escalation/scope.h) and the
// reports name it. Value type; thread-compatible.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fleetreap {

struct Scope {
  std::optional<std::vector<int>> gpus;  // host GPU indexes; nullopt: every GPU
  std::string cgroup;                    // a cgroup path; "": any
  std::string slurm_job;                 // a Slurm job id; "": any
  std::string source;                    // "flags" or "slurm"
  bool spare_pods = false;               // processes of Kubernetes pods are outside
  /// "gpus" are device minors (the N of /dev/nvidiaN, as SLURM_JOB_GPUS
  /// gives them), not nvidia-smi indexes: TranslateGpuMinors turns them
  /// into indexes once a scan has read the driver's minors.
  bool gpus_are_minors = false;

  bool empty() const { return !gpus && cgroup.empty() && slurm_job.empty() && !spare_pods; }
};

/// "0-3,5": GPU indexes as the reports write them, runs folded, in the
/// order given.
std::string FoldIndexes(const std::vector<int>& indexes);

/// "GPUs 4-7, cgroup /x, Slurm job 42 (from SLURM_JOB_ID, SLURM_JOB_GPUS)",
/// ", Kubernetes pods spared" with --spare-pods;
/// "" for an empty scope.
std::string DescribeScope(const Scope& scope);

}  // namespace fleetreap
