#include "fleetreap/remote/scan.h"

#include <map>
#include <set>

#include "fleetreap/base/text.h"
#include "fleetreap/model/process_owner.h"
#include "fleetreap/remote/gpu_health_query.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/systemctl_show.h"
#include "fleetreap/remote/xid_log.h"

namespace fleetreap {
namespace {

// nvidia-smi exits non-zero when a GPU is lost, yet still prints the other
// GPUs' rows: reads those (the lost-GPU lines taken out; the header still
// proves the columns). False when there are none.
bool ReadRowsBesideLostGpus(const std::string& out, std::vector<GpuReading>* gpus) {
  std::string rows;
  for (const std::string& line : SplitLines(out)) {
    LostGpu lost;
    if (!ParseLostGpuLine(line, &lost)) rows += line + "\n";
  }
  GpuQueryResult healthy;
  if (!ParseGpuQuery(rows, "", 0, ScanGpuFields(), &healthy).ok() || healthy.gpus.empty()) {
    return false;
  }
  gpus->insert(gpus->end(), healthy.gpus.begin(), healthy.gpus.end());
  return true;
}

GpuQueryAnswer ReadGpuQuery(const ScanOutput& scan) {
  GpuQueryAnswer answer;
  if (scan.nvidia_smi_exit == 124 || scan.nvidia_smi_exit == 137) {
    answer.timed_out = true;
    return answer;
  }
  GpuQueryResult query;
  answer.status =
      ParseGpuQuery(scan.nvidia_smi_out, "", scan.nvidia_smi_exit, ScanGpuFields(), &query);
  answer.gpus = query.gpus;
  answer.tool_message = query.tool_message;
  answer.gpu_lost = query.failure == NvidiaSmiFailure::kGpuLost;
  answer.stops_ladder = StopsTheLadder(query, scan.nvidia_smi_exit);
  if (!answer.status.ok() && answer.status.kind() == ErrorKind::kCommandFailed && answer.gpu_lost) {
    answer.only_lost_gpus = !ReadRowsBesideLostGpus(scan.nvidia_smi_out, &answer.gpus);
  }
  return answer;
}

// The kernel log's records: the boot record (sequence 0) is there unless
// the ring buffer has wrapped since boot.
void ReadKernelLog(const ScanOutput& scan, HostHealth* health) {
  if (scan.kmsg_exit < 0) return;
  if (scan.kmsg_exit != 0) {
    health->kernel_log = KernelLogState::kNotReadable;
    return;
  }
  XidLog log;
  ParseXidLog(scan.kmsg_out, &log);
  health->xids = log.events;
  health->malformed_xid_lines = log.malformed;
  const bool from_boot = log.first_sequence && *log.first_sequence == 0;
  health->kernel_log = from_boot ? KernelLogState::kRead : KernelLogState::kRotated;
}

// The readiness readings; the health fields come from the GPU query's rows
// (those beside a lost GPU's lines too), none when it printed no row.
Status ReadHealth(const ScanOutput& scan, const GpuQueryAnswer& query, HostHealth* health) {
  const bool rows = query.status.ok() || (query.gpu_lost && !query.only_lost_gpus);
  if (rows && !query.timed_out && !query.gpus.empty()) {
    std::string kept;
    for (const std::string& line : SplitLines(scan.nvidia_smi_out)) {
      if (!ParseLostGpuLine(line, nullptr)) kept += line + "\n";
    }
    Status status = ParseGpuHealth(kept, ScanGpuFields(), &health->gpus);
    if (!status.ok()) return Status::Error(status.kind(), "GPU health: " + status.message());
  }
  ReadKernelLog(scan, health);
  if (scan.nvswitches > 0) {
    health->nvswitch_present = true;
    health->fabric_manager_running = scan.fabric_manager == 1;
  } else {
    health->nvswitch_present = false;
  }
  health->driver_bus_ids = scan.driver_gpus;
  return Status::Ok();
}

// The app and table PIDs that no holder is, for the fold to describe them.
std::vector<int> AppPidsBesideHolders(const HostSnapshot& snapshot) {
  std::set<int> pids;
  for (const ComputeApp& app : snapshot.apps) {
    if (app.pid && *app.pid > 0) pids.insert(*app.pid);
  }
  for (const TableApp& app : snapshot.table_apps) {
    if (app.pid > 0) pids.insert(app.pid);
  }
  for (const Holder& h : snapshot.holders) pids.erase(h.pid);
  return {pids.begin(), pids.end()};
}

// What the show said of the units the fold reads: the holders' units and
// the playbook's active units with plain names (IsPlainUnitName, as the
// holders' are checked). The show also printed the playbook's other
// matching units (failed, activating...): left out.
std::map<std::string, UnitProperties> UnitsRead(const ScanOutput& scan,
                                                const std::vector<std::string>& active) {
  const std::map<std::string, UnitProperties> shown = ParseSystemctlShow(scan.show_out);
  std::map<std::string, UnitProperties> read;
  auto keep = [&](const std::string& unit) {
    auto found = shown.find(unit);
    if (found != shown.end()) read.insert(*found);
  };
  for (const std::string& unit : scan.owner_units) keep(unit);
  for (const std::string& unit : active) {
    if (IsPlainUnitName(unit)) keep(unit);
  }
  return read;
}

Status ReadHolders(const ScanOutput& scan, HostSnapshot* snapshot) {
  HolderScanInfo info;
  Status status = HoldersFromScan(scan, &snapshot->holders, &info);
  if (!status.ok()) return status;
  for (Holder& holder : snapshot->holders) {
    for (const ShmHold& hold : scan.shm_holds) {
      if (hold.pid == holder.pid) holder.shm_files.push_back(hold.file);
    }
  }
  snapshot->device_gpus = info.device_gpus;
  if (scan.apps_exit == 0) {
    // A failed apps query (a lost GPU) leaves the fd pass alone to judge.
    status = ParseComputeApps(scan.apps_out, "", 0, ScanAppsFields(), &snapshot->apps, nullptr);
    if (!status.ok()) return Status::Error(status.kind(), "compute apps: " + status.message());
  }
  std::vector<TableProcess> table;
  if (scan.table_exit == 0 && ParseProcessTable(scan.table_out, &table).ok()) {
    for (const TableProcess& p : table) snapshot->table_apps.push_back({p.gpu, p.pid, p.used_mib});
  }
  snapshot->app_processes = DescribeProcesses(scan, AppPidsBesideHolders(*snapshot));
  snapshot->minors = scan.minors;
  snapshot->self_cgroup = CgroupPathOf(scan.self_cgroup);
  snapshot->children = scan.children;
  snapshot->parents = scan.parents;
  std::vector<int> parents;
  for (const ChildProcess& parent : scan.parents) parents.push_back(parent.parent);
  snapshot->parent_processes = DescribeProcesses(scan, parents);
  snapshot->children_unlisted = scan.children_unlisted;
  snapshot->control_only_left_out = scan.control_only_left_out;
  snapshot->holder_walk_failed = scan.holder_walk_failed;
  return Status::Ok();
}

}  // namespace

Status ReadScan(const ScanOutput& scan, const std::vector<std::string>& units,
                HostSnapshot* snapshot) {
  *snapshot = HostSnapshot();
  snapshot->holders_scanned = scan.holders;
  snapshot->shell_pid = scan.shell_pid;
  snapshot->clock = scan.clock;
  snapshot->ancestors = scan.ancestors;
  if (scan.holders) {
    snapshot->pid_files = scan.pid_files;
    snapshot->pid_namespace = scan.pid_namespace;
    // nvidia-smi names PIDs of the host's namespace: seen from another one,
    // they would name other processes, or none.
    snapshot->sees_host_pid_namespace = SeesHostPidNamespace(scan);
    if (!snapshot->sees_host_pid_namespace) return Status::Ok();
  }
  if (scan.show_exit == 0) {
    snapshot->active_units = ActiveUnitsShown(scan.show_out, units);
    if (scan.holders) snapshot->units = UnitsRead(scan, snapshot->active_units);
  }
  if (scan.holders) {
    Status status = ReadHolders(scan, snapshot);
    if (!status.ok()) return status;
  }
  snapshot->gpu_query = ReadGpuQuery(scan);
  if (!scan.readiness) return Status::Ok();
  snapshot->health_read = true;
  return ReadHealth(scan, snapshot->gpu_query, &snapshot->health);
}

Status ReadPerGpuQuery(const std::string& out, std::vector<GpuReading>* gpus) {
  std::vector<PerGpuQuery> queries;
  Status status = ParsePerGpuQueryOutput(out, &queries);
  if (!status.ok()) return status;
  for (const PerGpuQuery& q : queries) {
    GpuQueryResult one;
    if (!ParseGpuQuery(q.out, "", q.exit_code, GpuQueryFields(), &one).ok()) continue;
    for (const GpuReading& gpu : one.gpus) {
      if (gpu.state != GpuState::kLost) gpus->push_back(gpu);
    }
  }
  return Status::Ok();
}

}  // namespace fleetreap
