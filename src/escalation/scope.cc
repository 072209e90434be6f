#include "fleetreap/escalation/scope.h"

#include <algorithm>
#include <set>

#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/holder.h"
#include "fleetreap/model/process_owner.h"

namespace fleetreap {

namespace {

bool ParseIndex(const std::string& text, int* value) {
  if (text.empty() || text.size() > 4) return false;
  int n = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
  }
  *value = n;
  return true;
}

// No cgroup read, or one outside this shell's cgroup namespace ("/..").
bool OwnerUnknown(const Holder& holder) {
  const std::string& cgroup = holder.owner.cgroup;
  return cgroup.empty() || cgroup.rfind("/..", 0) == 0;
}

}  // namespace

Status ParseGpuList(const std::string& text, const std::string& flag, std::vector<int>* gpus) {
  std::set<int> seen;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    std::string item = text.substr(start, comma - start);
    size_t dash = item.find('-');
    int first = 0, last = 0;
    bool ok = dash == std::string::npos
                  ? ParseIndex(item, &first) && (last = first, true)
                  : ParseIndex(item.substr(0, dash), &first) &&
                        ParseIndex(item.substr(dash + 1), &last) && first <= last;
    if (!ok) {
      return Status::Error(ErrorKind::kUsage,
                           flag + ": \"" + item + "\" is not a GPU index or range (0,2,4-7)");
    }
    for (int i = first; i <= last; ++i) seen.insert(i);
    start = comma + 1;
  }
  gpus->assign(seen.begin(), seen.end());
  return Status::Ok();
}

Status SlurmScope(const std::string& job_id, const std::string& job_gpus, Scope* scope) {
  Scope out;
  out.slurm_job = job_id;
  out.source = "slurm";
  if (!job_gpus.empty()) {
    std::vector<int> gpus;
    Status status = ParseGpuList(job_gpus, "SLURM_JOB_GPUS", &gpus);
    if (!status.ok()) return status;
    out.gpus = gpus;
    out.gpus_are_minors = true;
  }
  *scope = out;
  return Status::Ok();
}

Status TranslateGpuMinors(const std::map<std::string, int>& minor_by_bus_id,
                          const std::vector<GpuReading>& gpus, Scope* scope) {
  if (!scope->gpus_are_minors || !scope->gpus) return Status::Ok();
  std::map<int, int> index_by_minor;
  std::string known;
  for (const auto& [bus_id, minor] : minor_by_bus_id) {
    for (const GpuReading& gpu : gpus) {
      if (gpu.index >= 0 && !gpu.bus_id.empty() &&
          NormalizeBusId(gpu.bus_id) == NormalizeBusId(bus_id)) {
        index_by_minor[minor] = gpu.index;
      }
    }
  }
  for (const auto& [minor, index] : index_by_minor) {
    known += (known.empty() ? "" : ",") + std::to_string(minor);
  }
  std::set<int> indexes;
  const char* what = scope->source == "slurm" ? "SLURM_JOB_GPUS" : "--gpus";
  for (int minor : *scope->gpus) {
    auto found = index_by_minor.find(minor);
    if (found == index_by_minor.end()) {
      return Status::Error(ErrorKind::kCommandFailed,
                           std::string(what) + " minor " + std::to_string(minor) +
                               ": no GPU of this host has device minor " + std::to_string(minor) +
                               " (the driver's minors: " + (known.empty() ? "none read" : known) +
                               ")");
    }
    indexes.insert(found->second);
  }
  scope->gpus = std::vector<int>(indexes.begin(), indexes.end());
  scope->gpus_are_minors = false;
  return Status::Ok();
}

Status CheckGpuIndexes(const std::vector<GpuReading>& gpus, const Scope& scope) {
  if (!scope.gpus || scope.gpus_are_minors) return Status::Ok();
  std::set<int> present;
  for (const GpuReading& gpu : gpus) {
    if (gpu.index >= 0) present.insert(gpu.index);
  }
  std::vector<int> absent;
  for (int index : *scope.gpus) {
    if (present.count(index) == 0) absent.push_back(index);
  }
  if (absent.empty()) return Status::Ok();
  const std::string flag = scope.source == "slurm" ? "SLURM_JOB_GPUS " : "--gpus ";
  const std::vector<int> has(present.begin(), present.end());
  return Status::Error(
      ErrorKind::kCommandFailed,
      flag + FoldIndexes(*scope.gpus) + ": this host has no GPU " + FoldIndexes(absent) +
          " (its GPUs: " + (has.empty() ? std::string("none listed") : FoldIndexes(has)) + ")");
}

std::string OutOfScopeReason(const Holder& holder, const Scope& scope) {
  if (scope.gpus) {
    const std::vector<int>& used = holder.charged_gpus.empty() ? holder.gpus : holder.charged_gpus;
    std::string flag = scope.source == "slurm" ? "the job's GPUs " : "--gpus ";
    if (used.empty()) return "uses no GPU of " + flag + FoldIndexes(*scope.gpus);
    for (int gpu : used) {
      if (!GpuInScope(gpu, scope)) {
        return "uses GPU " + std::to_string(gpu) + ", outside " + flag + FoldIndexes(*scope.gpus);
      }
    }
  }
  const std::string& cgroup = holder.owner.cgroup;
  if (!scope.cgroup.empty() && !CgroupIsUnder(cgroup, scope.cgroup)) {
    return (cgroup.empty() ? std::string("cgroup unknown") : "cgroup " + cgroup) +
           ", outside --cgroup " + scope.cgroup;
  }
  if (!scope.slurm_job.empty() && holder.owner.slurm_job != scope.slurm_job) {
    std::string owner = DescribeOwner(holder.owner);
    return "not in Slurm job " + scope.slurm_job + (owner.empty() ? "" : " (" + owner + ")");
  }
  if (scope.spare_pods && cgroup.empty()) return "cgroup unknown, a pod may own it (--spare-pods)";
  if (scope.spare_pods && !holder.owner.pod_uid.empty()) {
    return "owned by Kubernetes pod UID " + holder.owner.pod_uid + " (--spare-pods)";
  }
  return "";
}

void ApplyScopeToGpus(const Scope& scope, const std::vector<Holder>& holders,
                      std::vector<GpuReading>* gpus) {
  if (scope.empty()) return;
  for (GpuReading& gpu : *gpus) {
    if (gpu.index < 0) continue;
    if (!GpuInScope(gpu.index, scope)) {
      gpu.state = GpuState::kOutOfScope;
      gpu.detail = "outside " +
                   std::string(scope.source == "slurm" ? "the job's GPUs " : "--gpus ") +
                   FoldIndexes(*scope.gpus);
      continue;
    }
    bool narrowed = !scope.cgroup.empty() || !scope.slurm_job.empty();
    if (scope.gpus || !narrowed || gpu.state != GpuState::kBusy) continue;
    bool others = false, foreign = false;
    std::string names;
    for (const Holder& h : holders) {
      if (std::find(h.gpus.begin(), h.gpus.end(), gpu.index) == h.gpus.end()) continue;
      if (h.fate == HolderFate::kTerminated || h.fate == HolderFate::kKilled ||
          h.fate == HolderFate::kGone || h.fate == HolderFate::kProtected) {
        continue;
      }
      // A holder whose cgroup cannot be read may be the job's own: its GPU
      // stays busy, never out of scope.
      if (h.fate == HolderFate::kOutOfScope && !OwnerUnknown(h)) {
        foreign = true;
        names += (names.empty() ? "" : ", ") + h.comm + " (" + std::to_string(h.pid) + ")";
      } else {
        others = true;
      }
    }
    if (foreign && !others) {
      gpu.state = GpuState::kOutOfScope;
      gpu.detail = "held only by out-of-scope " + names;
    }
  }
}

bool GpuInScope(int index, const Scope& scope) {
  return !scope.gpus ||
         std::find(scope.gpus->begin(), scope.gpus->end(), index) != scope.gpus->end();
}

}  // namespace fleetreap
