#include "fleetreap/model/scope.h"

namespace fleetreap {

std::string FoldIndexes(const std::vector<int>& indexes) {
  std::string out;
  for (size_t i = 0; i < indexes.size();) {
    size_t j = i;
    while (j + 1 < indexes.size() && indexes[j + 1] == indexes[j] + 1) ++j;
    out += (out.empty() ? "" : ",") + std::to_string(indexes[i]) +
           (j > i ? "-" + std::to_string(indexes[j]) : "");
    i = j + 1;
  }
  return out;
}

std::string DescribeScope(const Scope& scope) {
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (scope.gpus) add("GPUs " + FoldIndexes(*scope.gpus));
  if (!scope.cgroup.empty()) add("cgroup " + scope.cgroup);
  if (!scope.slurm_job.empty()) add("Slurm job " + scope.slurm_job);
  if (scope.source == "slurm") {
    out += std::string(" (from SLURM_JOB_ID") + (scope.gpus ? ", SLURM_JOB_GPUS)" : ")");
  }
  if (scope.spare_pods) add("Kubernetes pods spared");
  return out;
}

}  // namespace fleetreap
