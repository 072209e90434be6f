// The host_cleaner runner's reading of a host: the scan, the quick scan
// that trusts a clean nvidia-smi, the per-GPU fallback after a lost GPU, and
// the ghost check under protected daemons.
#include <algorithm>

#include "fleetreap/escalation/gpu_state.h"
#include "fleetreap/escalation/host_view.h"
#include "fleetreap/escalation/unit_properties.h"
#include "fleetreap/model/process_owner.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "fleetreap/remote/proc_scan.h"
#include "fleetreap/remote/remote_script.h"
#include "host_cleaner_run.h"

namespace fleetreap {
namespace host_cleaner_internal {

using std::chrono::milliseconds;

namespace {

// The table's processes as compute apps (by the GPU's UUID), so that a
// graphics client holding memory is a holder, never a ghost.
void AddTableProcesses(const ScanOutput& scan, const std::vector<GpuReading>& gpus,
                       std::vector<ComputeApp>* apps) {
  std::vector<TableProcess> table;
  if (scan.table_exit != 0 || !ParseProcessTable(scan.table_out, &table).ok()) return;
  for (const TableProcess& process : table) {
    for (const GpuReading& gpu : gpus) {
      if (gpu.index != process.gpu) continue;
      ComputeApp app;
      app.pid = process.pid;
      app.gpu_uuid = gpu.uuid;
      app.gpu_bus_id = gpu.bus_id;
      app.used_mib = process.used_mib;
      apps->push_back(app);
    }
  }
}

}  // namespace

ScanRequest Runner::Request(const std::vector<std::string>& units, bool holders) const {
  ScanRequest request;
  request.units = units;
  request.nvidia_smi_timeout = nvidia_smi_timeout_;
  request.holders = holders;
  if (holders) request.watch = WatchedParents(view_.holders);
  request.table = table_scan_;
  return request;
}

bool Runner::InspectWithShmDryRun(const std::vector<std::string>& units) {
  CommandResult result;
  std::string script =
      ShmCleanScript(playbook_.shm_patterns, /*dry_run=*/true) + ScanScript(Request(units, true));
  if (!Exec(script, job_.command_timeout + 2 * nvidia_smi_timeout_, &result)) return false;
  ShmOutput shm;
  ScanOutput scan;
  Status status = ParseShmOutput(result.out, &shm, &scan);
  if (!status.ok()) return Fail(status.kind(), status.message());
  RecordShm(shm, /*dry_run=*/true);
  return Scan(units, &report_.gpus_before, true, &scan);
}

bool Runner::QuickScan(std::vector<GpuReading>* gpus, const ScanOutput* prefetched) {
  if (!Scan({}, gpus, /*holders=*/false, prefetched)) return false;
  return QuickScanSuffices(*gpus) || Scan({}, gpus);
}

bool Runner::Scan(const std::vector<std::string>& units, std::vector<GpuReading>* gpus,
                  bool holders, const ScanOutput* prefetched) {
  ScanOutput scan;
  if (prefetched != nullptr) {
    scan = *prefetched;
  } else {
    ScanRequest request = Request(units, holders);
    CommandResult result;
    // Two nvidia-smi calls, each bounded on the host.
    milliseconds timeout = job_.command_timeout + 2 * nvidia_smi_timeout_;
    if (!Exec(ScanScript(request), timeout, &result)) return false;
    Status status = ParseScanOutput(result.out, &scan);
    if (!status.ok()) {
      return Fail(status.kind(),
                  status.message() + (result.err.empty() ? "" : ": " + FirstLine(result.err)));
    }
  }
  protect_.SetSession(scan.shell_pid, {scan.ancestors.begin(), scan.ancestors.end()});
  if (holders) {
    protect_.SetPidFiles(scan.pid_files);
    // nvidia-smi names PIDs of the host's namespace: seen from another one,
    // they would name other processes, or none.
    if (!SeesHostPidNamespace(scan)) {
      stop_ladder_ = true;
      return Fail(ErrorKind::kCommandFailed,
                  "nothing signalled or removed: this shell does not see the host's PID "
                  "namespace (" +
                      (scan.pid_namespace.empty() ? std::string("unknown") : scan.pid_namespace) +
                      "), where nvidia-smi's PIDs live; run fleetreap on the host, or in a "
                      "container with the host's PID namespace (hostPID)");
    }
  }
  std::map<std::string, UnitProperties> unit_props;
  if (scan.show_exit == 0) unit_props = ParseSystemctlShow(scan.show_out);

  std::vector<Holder> scanned;
  std::vector<ComputeApp> apps;
  if (holders) {
    HolderScanInfo info;
    Status status = HoldersFromScan(scan, &scanned, &info);
    if (!status.ok()) return Fail(status.kind(), status.message());
    device_gpus_ = std::max(device_gpus_, info.device_gpus);
    if (scan.apps_exit == 0) {
      // A failed apps query (a lost GPU) leaves the fd pass alone to judge.
      status = ParseComputeApps(scan.apps_out, "", 0, ScanAppsFields(), &apps, nullptr);
      if (!status.ok()) return Fail(status.kind(), "compute apps: " + status.message());
    }
  }

  GpuQueryResult query;
  if (scan.nvidia_smi_exit == 124 || scan.nvidia_smi_exit == 137) {
    report_.nvidia_smi_error = "nvidia-smi did not answer within " +
                               std::to_string(nvidia_smi_timeout_.count() / 1000) + "s";
    return Fail(ErrorKind::kCommandTimeout, report_.nvidia_smi_error);
  }
  Status status =
      ParseGpuQuery(scan.nvidia_smi_out, "", scan.nvidia_smi_exit, GpuQueryFields(), &query);
  if (!query.tool_message.empty()) report_.nvidia_smi_error = query.tool_message;
  nvidia_smi_failed_ = !status.ok() && query.failure != NvidiaSmiFailure::kGpuLost;
  // No driver (exit 9) or a GPU off the bus (exit 15): nothing is signalled.
  if (!escalation_.history().inspected && StopsTheLadder(query, scan.nvidia_smi_exit)) {
    stop_ladder_ = true;
  }
  if (!status.ok() && status.kind() != ErrorKind::kCommandFailed) {
    return Fail(status.kind(), status.message());
  }
  if (!status.ok() && report_.nvidia_smi_error.empty()) {
    report_.nvidia_smi_error = status.message();
  }
  *gpus = query.gpus;
  if (!status.ok() && query.failure == NvidiaSmiFailure::kGpuLost &&
      !ReadRowsBesideLostGpus(scan.nvidia_smi_out, gpus) && !QueryGpusOneByOne(gpus)) {
    return false;
  }
  if (holders) {
    // SLURM_JOB_GPUS are device minors too; an unknown one fails the host.
    status = TranslateGpuMinors(scan.minors, *gpus, &scope_);
    if (!status.ok()) return Fail(status.kind(), status.message());
    // /dev/nvidiaN is the device minor, not always nvidia-smi's index.
    MapHolderGpusToIndexes(scan.minors, *gpus, &scanned);
    AddTableProcesses(scan, *gpus, &apps);
    AddComputeApps(scan, apps, *gpus, &scanned);
    for (Holder& h : scanned) {
      auto unit = unit_props.find(h.owner.unit);
      if (unit != unit_props.end() && unit->second.restart != "no") {
        h.owner.unit_restart = unit->second.restart;
      }
    }
    MergeHolderScan(scanned, protect_, scope_, escalation_.history().waves, &view_.holders);
    if (!escalation_.history().inspected) {
      view_.active_units =
          UnitsSafeToStop(scan.active_units, unit_props, CgroupPathOf(scan.self_cgroup),
                          view_.holders, &report_.units_skipped);
    }
    view_.newcomers = FindNewcomers(scan.children, view_.holders);
    if (!scan.parents.empty()) view_.parents = scan.parents;
  }
  std::vector<Holder> current;
  for (const TrackedHolder& t : view_.holders) current.push_back(t.holder);
  // Without an inventory count, the /dev/nvidiaN files held say how many
  // GPUs the driver knows at least: a GPU that fell off the bus keeps them.
  int expected = job_.host->expected_gpus > 0 ? job_.host->expected_gpus : device_gpus_;
  NumberTheLostGpu(expected, gpus);
  ClassifyGpus(current, expected, threshold_, gpus, playbook_.daemon_allowance_mib);
  ApplyScopeToGpus(scope_, current, gpus);
  if (holders) {
    // Over the threshold under protected daemons only, and no process has
    // memory there: ghost memory (the compute apps came with this scan).
    std::vector<int> suspects = GpusHeldOnlyByProtected(view_.holders, *gpus);
    if (!suspects.empty()) MarkGhostsWithoutApps(suspects, apps, gpus);
  }
  view_.gpus = *gpus;
  bool ghost = std::any_of(gpus->begin(), gpus->end(),
                           [](const GpuReading& g) { return g.state == GpuState::kGhost; });
  if (holders && ghost && !table_scan_) {
    // Memory with no holder: before calling it a ghost, look again with the
    // table, which also lists graphics clients.
    table_scan_ = true;
    bool ok = Scan(units, gpus, holders);
    table_scan_ = false;
    return ok;
  }
  return true;
}

bool Runner::QueryGpusOneByOne(std::vector<GpuReading>* gpus) {
  int count = job_.host->expected_gpus > 0 ? job_.host->expected_gpus : device_gpus_;
  std::vector<int> indexes;
  for (int i = 0; i < count; ++i) indexes.push_back(i);
  if (indexes.empty()) return true;
  CommandResult result;
  milliseconds timeout = job_.command_timeout + nvidia_smi_timeout_;
  if (!Exec(PerGpuQueryScript(indexes, nvidia_smi_timeout_), timeout, &result)) {
    return false;
  }
  std::vector<PerGpuQuery> queries;
  Status status = ParsePerGpuQueryOutput(result.out, &queries);
  if (!status.ok()) return Fail(status.kind(), status.message());
  for (const PerGpuQuery& q : queries) {
    GpuQueryResult one;
    if (!ParseGpuQuery(q.out, "", q.exit_code, GpuQueryFields(), &one).ok()) continue;
    for (const GpuReading& gpu : one.gpus) {
      if (gpu.state != GpuState::kLost) gpus->push_back(gpu);
    }
  }
  return true;
}

}  // namespace host_cleaner_internal
}  // namespace fleetreap
