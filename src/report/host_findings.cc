
#include "fleetreap/report/host_findings.h"

#include <algorithm>

#include "fleetreap/base/text.h"

namespace fleetreap {
namespace {

namespace fk = finding_kind;

std::string Pids(const std::vector<int>& pids) {
  std::vector<std::string> out;
  for (int pid : pids) out.push_back(std::to_string(pid));
  return Join(out, ", ");
}

// "1234 (comm)", or "1234" when the comm is unknown.
std::string Process(const HostFinding& finding, size_t i) {
  std::string out = i < finding.pids.size() ? std::to_string(finding.pids[i]) : "?";
  if (i < finding.names.size() && !finding.names[i].empty()) out += " (" + finding.names[i] + ")";
  return out;
}

std::string Unkillable(const HostFinding& finding) {
  std::vector<std::string> parts;
  for (size_t i = 0; i < finding.pids.size(); ++i) {
    const char state = i < finding.detail.size() ? finding.detail[i] : '?';
    parts.push_back(Process(finding, i) + " in state " + std::string(1, state));
  }
  return "unkillable holder left: pid " + Join(parts, ", ");
}

std::string GpusNotEmpty(const HostFinding& finding) {
  std::vector<std::string> gpus;
  for (int gpu : finding.gpus) gpus.push_back(std::to_string(gpu));
  return std::string(finding.gpus.size() == 1 ? "GPU " : "GPUs ") + Join(gpus, ",") +
         " not empty (" + std::to_string(finding.mib) + " MiB)";
}

std::string ScanFindingText(const HostFinding& finding) {
  const std::string& k = finding.kind;
  if (k == fk::kHolderWalkFailed) {
    return "the holder walk could not run (its perl failed, or a find or grep over /proc did not "
           "start: an argument list too long?): processes holding the GPUs may be unseen, so "
           "the host is not judged clean";
  }
  if (k == fk::kControlOnlyLeftOut) {
    return std::to_string(finding.count) +
           " processes hold only NVIDIA control devices (/dev/nvidiactl, /dev/nvidia-uvm...) and "
           "no GPU memory: more than a scan describes, so none of them was described or "
           "signalled";
  }
  if (k == fk::kRespawnWatchBlind) {
    return "respawn watch blind: the kernel lists no children (no "
           "/proc/PID/task/*/children, CONFIG_PROC_CHILDREN off) of pid " +
           Pids(finding.pids) + ": a worker it starts again is seen only once it holds a GPU";
  }
  if (k == fk::kUnheldHolder) {
    return "pid " + Process(finding, 0) +
           ": nvidia-smi charges it GPU memory but it holds no NVIDIA device file (no fd of any "
           "thread, no mapping): not signalled, as it is not the process the driver charged or "
           "not one a signal would free";
  }
  return "";
}

// "unit trainer.service (Restart=always, RestartSec=5s)", or with
// "kill_mode" "unit vllm.service (KillMode=process)": what the kind is about.
std::string UnitText(const HostFinding& f, bool kill_mode = false) {
  if (f.units.empty()) return "";
  std::vector<std::string> props;
  if (kill_mode && !f.kill_mode.empty()) props.push_back("KillMode=" + f.kill_mode);
  if (!kill_mode && !f.restart.empty() && f.restart != "no") {
    props.push_back("Restart=" + f.restart);
    if (!f.restart_sec.empty()) props.push_back("RestartSec=" + f.restart_sec);
  }
  return "unit " + f.units.front() + (props.empty() ? "" : " (" + Join(props, ", ") + ")");
}

// "pid 500 (supervisord), /usr/bin/python3 /usr/bin/supervisord -n, user
// bob, unit x.service (Restart=always), cgroup /user.slice/..."
std::string ProcessText(const HostFinding& f) {
  std::vector<std::string> parts;
  if (f.processes.empty()) return UnitText(f);
  const Holder& p = f.processes.front();
  parts.push_back("pid " + std::to_string(p.pid) + " (" + p.comm + ")");
  if (!p.cmdline.empty()) parts.push_back(p.cmdline);
  if (!p.exe.empty()) parts.push_back("exe " + p.exe);
  if (!p.user.empty()) parts.push_back("user " + p.user);
  const std::string owner = p.owner.unit.empty() ? DescribeOwner(p.owner) : UnitText(f);
  if (!owner.empty()) parts.push_back(owner);
  if (!p.owner.cgroup.empty()) parts.push_back("cgroup " + p.owner.cgroup);
  return Join(parts, ", ");
}

std::string RestarterText(const HostFinding& f) {
  const std::string stop = f.detail.empty()
                               ? "no command stops it for good from this host (a pod: its "
                                 "controller starts it again; scale that down)"
                               : "stop it with: " + f.detail;
  if (f.processes.empty()) {
    return "restarter alive: " + UnitText(f) + " starts its holders again on its own; " + stop;
  }
  return "restarter alive: " + ProcessText(f) +
         ", which started a signalled GPU holder, was watched and lives on; " + stop;
}

// Why the holders were there, and the fix at the source (docs/playbooks.md).
// "count": "8", or a group's "6-8"; "one_host": with what differs from host
// to host (cgroup, parent, container, job, the restarter's PID and command).
std::string CauseWords(const HostFinding& f, const std::string& count, bool one_host) {
  const std::string n = count + (count == "1" ? " holder" : " holders");
  const std::string user = f.names.empty() ? "" : "user " + f.names.front();
  const std::string cgroup = one_host && !f.detail.empty() ? "cgroup " + f.detail : "";
  const std::string where = JoinNonEmpty({user, cgroup}, ", ");
  const std::string& c = f.cause;
  if (c == holder_cause::kRestarter) {
    std::string who = one_host ? ProcessText(f) : UnitText(f);
    if (who.empty() && !f.processes.empty()) who = "(" + f.processes.front().comm + ")";
    return n + " started again by a restarter " + who +
           ": stop the restarter (or its unit, pod or job) before cleaning";
  }
  if (c == holder_cause::kOutlivedUnitStop) {
    return n + " outlived the stop of " + UnitText(f, true) +
           ", still in its cgroup: set KillMode=control-group (or mixed) in the unit";
  }
  if (c == holder_cause::kUnitRunning) {
    return n + " of the running " + UnitText(f, true) +
           ": stopping the unit ends them (list it in the playbook's units)";
  }
  if (c == holder_cause::kContainer) {
    return n + " of a container" + (one_host ? " (" + f.detail + ")" : "") +
           ": stop the container or delete its pod";
  }
  if (c == holder_cause::kSlurmJob) {
    return n + " of a Slurm job" + (one_host ? " (" + f.detail + ")" : "") +
           " after it ended: let the job's cgroup end them (proctrack/cgroup, task/cgroup)";
  }
  const std::string at = where.empty() ? "" : " (" + where + ")";
  if (c == holder_cause::kOrphan) {
    return n + " re-parented to init after their parent died" + at +
           ": end workers with their launcher (a process group, PR_SET_PDEATHSIG) or run the "
           "job as a unit";
  }
  const std::string parent =
      one_host && !f.pids.empty() ? ", parent " + std::to_string(f.pids.front()) : "";
  return n + " of a job outside any unit" + at + parent +
         ": run it as a unit or under the scheduler, so that stopping it ends them";
}

}  // namespace

std::string HostFindingText(const HostFinding& finding) {
  const std::string& k = finding.kind;
  if (k == fk::kSignalRefused) {
    return "not permitted to signal " + Join(finding.names, ", ") +
           ": run with --become or as root";
  }
  if (k == fk::kNvidiaSmiFailed) return "nvidia-smi: " + finding.detail;
  if (k == fk::kDidNotConverge) {
    return "the escalation did not converge after " + std::to_string(finding.count) + " steps";
  }
  if (k == fk::kNewcomerWithoutGpu) {
    return "pid " + Process(finding, 0) + ", started by " + Process(finding, 1) +
           " after its GPU holder was signalled, holds no GPU yet";
  }
  if (k == fk::kUnkillableHolder) return Unkillable(finding);
  if (k == fk::kDriverUnusable) {
    return "nothing signalled or removed: nvidia-smi says a GPU is lost or the driver is not "
           "loaded";
  }
  if (k == fk::kGpusNotEmpty) return GpusNotEmpty(finding);
  if (k == fk::kHoldersRespawning) return "holders respawning, restarted by " + Process(finding, 0);
  if (k == fk::kResetBlocked) return "reset blocked by " + finding.detail;
  if (k == fk::kResetUnitNotRestarted) {
    return "not active again after the GPU reset: " +
           (finding.detail.empty() ? Join(finding.units, ", ") : finding.detail);
  }
  if (k == fk::kRestarterAlive) return RestarterText(finding);
  if (k == fk::kCause) return "cause: " + CauseWords(finding, std::to_string(finding.count), true);
  const std::string scan = ScanFindingText(finding);
  return scan.empty() ? k : scan;
}

std::string HostMessage(const HostReport& host) {
  if (!host.error_message.empty()) return host.error_message;
  for (const HostFinding& finding : host.findings) {
    if (finding.reason) return HostFindingText(finding);
  }
  return "";
}

std::string CauseSummary(const HostFinding& cause, const std::string& count) {
  return CauseWords(cause, count, false);
}

std::string HostCauseText(const HostReport& host) {
  for (const HostFinding& finding : host.findings) {
    if (finding.kind == fk::kCause) return HostFindingText(finding);
  }
  return "";
}

std::vector<std::string> HostNotes(const HostReport& host) {
  std::vector<std::string> notes = host.notes;
  for (const HostFinding& finding : host.findings) {
    if (finding.note) notes.push_back(HostFindingText(finding));
  }
  return notes;
}

}  // namespace fleetreap
