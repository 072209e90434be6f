// ProcessOwner: who a process belongs to, read from /proc/PID/cgroup: its
// systemd unit, its container (docker, containerd, cri-o, podman), its
// Kubernetes pod, its Slurm job and step. Pure parsing of host text; value
// type, thread-compatible.
#pragma once

#include <string>

namespace fleetreap {

struct ProcessOwner {
  std::string cgroup;             // the path the owner was read from ("" unknown)
  std::string unit;               // "vllm.service" (the innermost .service)
  std::string container_runtime;  // "docker", "containerd", "crio", "podman"
  std::string container_id;       // 64 hex digits as the runtime names it
  std::string pod_uid;            // Kubernetes pod UID, with dashes
  std::string slurm_job;          // "42"
  std::string slurm_step;         // "0", "batch", "extern", "interactive"
  std::string unit_restart;       // the unit's Restart= ("always", ...), "" no/unknown

  bool empty() const {
    return unit.empty() && container_id.empty() && pod_uid.empty() && slurm_job.empty();
  }
};

/// The cgroup path of a /proc/PID/cgroup text: a cgroup v1 controller line
/// in Slurm's cgroup/v1 job layout ("4:freezer:/slurm/uid_0/job_41/step_0":
/// there the name=systemd and v2 lines name slurmd's unit, not the job),
/// else the cgroup v2 line ("0::") when it names more than the root, else
/// the name=systemd line, else the first other non-root line; "" when there
/// is none (the root, or text that is not a cgroup file).
std::string CgroupPathOf(const std::string& proc_cgroup);

/// Reads the owner from a cgroup path ("/system.slice/docker-<id>.scope",
/// "/kubepods.slice/.../kubepods-pod<uid>.slice/cri-containerd-<id>.scope",
/// "/system.slice/slurmstepd.scope/job_42/step_0/user/task_0",
/// "/slurm/uid_1000/job_42/step_batch"). Unrecognised parts are ignored.
ProcessOwner OwnerFromCgroup(const std::string& cgroup_path);

/// One line for reports: "unit vllm.service (Restart=always)", "docker
/// 3f2a9c1b7e4d", "pod 0f1e..., containerd 3f2a...", "slurm job 42 step 0";
/// "" when nothing is known.
std::string DescribeOwner(const ProcessOwner& owner);

/// Whether "path" is "root" or below it, by whole components
/// ("/a/b" is under "/a", "/ab" is not; "/" holds everything).
bool CgroupIsUnder(const std::string& path, const std::string& root);

}  // namespace fleetreap
