#include "fleetreap/model/process_owner.h"

#include <cctype>
#include <vector>

#include "fleetreap/base/text.h"

namespace fleetreap {

namespace {

bool StartsWith(const std::string& s, const std::string& prefix) {
  return s.compare(0, prefix.size(), prefix) == 0;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool IsHexId(const std::string& s) {
  if (s.size() < 12 || s.size() > 64) return false;
  for (char c : s) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::vector<std::string> Components(const std::string& path) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == std::string::npos) slash = path.size();
    if (slash > start) out.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  return out;
}

// "docker-<id>.scope", "cri-containerd-<id>.scope", "crio-<id>.scope",
// "libpod-<id>.scope" (systemd driver) or a bare "<id>" under "docker" or
// a pod folder (cgroupfs driver).
bool ReadContainer(const std::string& part, const std::string& parent, ProcessOwner* owner) {
  static const std::pair<const char*, const char*> kScopes[] = {{"docker-", "docker"},
                                                                {"cri-containerd-", "containerd"},
                                                                {"crio-", "crio"},
                                                                {"libpod-", "podman"}};
  for (const auto& [prefix, runtime] : kScopes) {
    if (!StartsWith(part, prefix) || !EndsWith(part, ".scope")) continue;
    std::string id = part.substr(std::string(prefix).size());
    id.resize(id.size() - 6);
    if (!IsHexId(id)) return false;
    owner->container_runtime = runtime;
    owner->container_id = id;
    return true;
  }
  if (IsHexId(part) && (parent == "docker" || StartsWith(parent, "pod"))) {
    owner->container_runtime = parent == "docker" ? "docker" : "containerd";
    owner->container_id = part;
    return true;
  }
  return false;
}

// "kubepods-burstable-pod<uid>.slice" (systemd driver: '_' for '-') or
// "pod<uid>" (cgroupfs driver).
bool ReadPod(const std::string& part, ProcessOwner* owner) {
  std::string uid;
  size_t at = part.find("-pod");
  if (StartsWith(part, "kubepods") && at != std::string::npos && EndsWith(part, ".slice")) {
    uid = part.substr(at + 4, part.size() - at - 4 - 6);
    for (char& c : uid) {
      if (c == '_') c = '-';
    }
  } else if (StartsWith(part, "pod") && part.size() == 39) {
    uid = part.substr(3);
  } else {
    return false;
  }
  if (uid.size() != 36) return false;
  for (char c : uid) {
    if (c != '-' && !std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  owner->pod_uid = uid;
  return true;
}

bool AllDigits(const std::string& s) {
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// Slurm's cgroup/v1 job layout: "/slurm/uid_U/job_J/..." ("/slurm_NODE/..."
// with several slurmd per host). In such a hierarchy the job's cgroup is the
// one that owns the process; the name=systemd and v2 lines name slurmd's unit.
bool IsSlurmV1JobPath(const std::string& path) {
  std::vector<std::string> parts = Components(path);
  return parts.size() >= 3 && StartsWith(parts[0], "slurm") && StartsWith(parts[1], "uid_") &&
         AllDigits(parts[1].substr(4)) && StartsWith(parts[2], "job_") &&
         AllDigits(parts[2].substr(4));
}

}  // namespace

std::string CgroupPathOf(const std::string& proc_cgroup) {
  std::string v2, systemd, other, slurm_v1;
  for (const std::string& line : SplitLines(proc_cgroup)) {
    size_t first = line.find(':');
    size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos || !AllDigits(line.substr(0, first))) continue;
    std::string controllers = line.substr(first + 1, second - first - 1);
    std::string path = line.substr(second + 1);
    if (path.empty() || path[0] != '/' || path == "/") continue;
    if (line.compare(0, 3, "0::") == 0) {
      v2 = path;
    } else if (slurm_v1.empty() && IsSlurmV1JobPath(path)) {
      slurm_v1 = path;
    } else if (controllers == "name=systemd") {
      systemd = path;
    } else if (other.empty()) {
      other = path;
    }
  }
  if (!slurm_v1.empty()) return slurm_v1;
  if (!v2.empty()) return v2;
  return systemd.empty() ? other : systemd;
}

ProcessOwner OwnerFromCgroup(const std::string& cgroup_path) {
  ProcessOwner owner;
  owner.cgroup = cgroup_path;
  std::vector<std::string> parts = Components(cgroup_path);
  std::string parent;
  bool kube = false;  // under the kubelet's own root
  for (const std::string& part : parts) {
    if (EndsWith(part, ".service") && part.size() > 8) owner.unit = part;
    // systemd delegates user@UID.service to its user: the names below it
    // are the user's to choose, none of them is believed.
    if (StartsWith(part, "user@")) break;
    kube = kube || StartsWith(part, "kubepods") || StartsWith(part, "kubelet");
    if (ReadContainer(part, parent, &owner) || (kube && ReadPod(part, &owner))) {
      parent = part;
      continue;
    }
    if (StartsWith(part, "job_") && AllDigits(part.substr(4))) owner.slurm_job = part.substr(4);
    if (StartsWith(part, "step_") && part.size() > 5 && !owner.slurm_job.empty()) {
      owner.slurm_step = part.substr(5);
    }
    parent = part;
  }
  // A unit above a container or a job (containerd.service, slurmd.service
  // in cgroupfs layouts) runs it; it does not own the process.
  if (!owner.container_id.empty() || !owner.slurm_job.empty()) {
    size_t unit_at = cgroup_path.find("/" + owner.unit);
    size_t inner_at = cgroup_path.find(owner.container_id.empty() ? "/job_" : owner.container_id);
    if (!owner.unit.empty() && unit_at < inner_at) owner.unit.clear();
  }
  return owner;
}

std::string DescribeOwner(const ProcessOwner& owner) {
  std::string out;
  auto add = [&out](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (!owner.slurm_job.empty()) {
    add("slurm job " + owner.slurm_job +
        (owner.slurm_step.empty() ? "" : " step " + owner.slurm_step));
  }
  if (!owner.pod_uid.empty()) add("pod " + owner.pod_uid);
  if (!owner.container_id.empty()) {
    add(owner.container_runtime + " " + owner.container_id.substr(0, 12));
  }
  if (!owner.unit.empty()) {
    add("unit " + owner.unit +
        (owner.unit_restart.empty() ? "" : " (Restart=" + owner.unit_restart + ")"));
  }
  return out;
}

bool CgroupIsUnder(const std::string& path, const std::string& root) {
  if (root.empty() || root == "/") return !path.empty();
  std::string r = root;
  while (r.size() > 1 && r.back() == '/') r.pop_back();
  if (!StartsWith(path, r)) return false;
  return path.size() == r.size() || path[r.size()] == '/';
}

}  // namespace fleetreap
