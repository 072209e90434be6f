// The host_cleaner runner's reading of a host: the scan, the quick scan
// that trusts a clean nvidia-smi, the per-GPU fallback after a lost GPU, and
// the ghost check under protected daemons.
#include <algorithm>

#include "fleetreap/gpu_state.h"
#include "fleetreap/host_view.h"
#include "fleetreap/nvidia_smi.h"
#include "fleetreap/proc_scan.h"
#include "fleetreap/remote_script.h"
#include "host_cleaner_run.h"

namespace fleetreap {
namespace host_cleaner_internal {

using std::chrono::milliseconds;

bool Runner::QuickScan(std::vector<GpuReading>* gpus, const std::string* prefetched) {
  if (!Scan({}, gpus, /*holders=*/false, prefetched)) return false;
  for (const GpuReading& gpu : *gpus) {
    if (gpu.state != GpuState::kClean && gpu.state != GpuState::kProtectedOnly) {
      return Scan({}, gpus);
    }
  }
  return !gpus->empty() || Scan({}, gpus);
}

bool Runner::Scan(const std::vector<std::string>& units,
                  std::vector<GpuReading>* gpus, bool holders,
                  const std::string* prefetched) {
  CommandResult result;
  milliseconds timeout = job_.command_timeout + nvidia_smi_timeout_;
  if (prefetched != nullptr) {
    result.out = *prefetched;
  } else if (!Exec(ScanScript(units, nvidia_smi_timeout_, holders,
                               holders ? WatchedParents(view_.holders) : std::vector<int>{}),
                    timeout, &result)) {
    return false;
  }
  ScanOutput scan;
  Status status = ParseScanOutput(result.out, &scan);
  if (!status.ok()) {
    return Fail(status.kind(), status.message() +
                                   (result.err.empty() ? "" : ": " + FirstLine(result.err)));
  }
  protect_.SetSession(scan.shell_pid, {scan.ancestors.begin(), scan.ancestors.end()});
  if (!history_.inspected) view_.active_units = scan.active_units;

  std::vector<Holder> scanned;
  HolderScanInfo info;
  if (holders) {
    status = ParseHolderScan(scan.holder_scan, &scanned, &info);
    if (!status.ok()) return Fail(status.kind(), status.message());
    for (const std::string& device : info.devices) {
      device_gpus_ = std::max(device_gpus_, GpuIndexOfDevice(device) + 1);
    }
  }

  GpuQueryResult query;
  if (scan.nvidia_smi_exit == 124 || scan.nvidia_smi_exit == 137) {
    report_.nvidia_smi_error = "nvidia-smi did not answer within " +
                               std::to_string(nvidia_smi_timeout_.count() / 1000) + "s";
    return Fail(ErrorKind::kCommandTimeout, report_.nvidia_smi_error);
  }
  status = ParseGpuQuery(scan.nvidia_smi_out, scan.nvidia_smi_err,
                         scan.nvidia_smi_exit, GpuQueryFields(), &query);
  if (!query.tool_message.empty()) report_.nvidia_smi_error = query.tool_message;
  nvidia_smi_failed_ = !status.ok() && query.failure != NvidiaSmiFailure::kGpuLost;
  if (!status.ok() && status.kind() != ErrorKind::kCommandFailed) {
    return Fail(status.kind(), status.message());
  }
  if (!status.ok() && report_.nvidia_smi_error.empty()) {
    report_.nvidia_smi_error = status.message();
  }
  *gpus = query.gpus;
  if (!status.ok() && query.failure == NvidiaSmiFailure::kGpuLost &&
      !ReadRowsBesideLostGpus(scan.nvidia_smi_out, gpus) &&
      !QueryGpusOneByOne(gpus)) {
    return false;
  }
  if (holders) {
    // /dev/nvidiaN is the device minor, not always nvidia-smi's index.
    MapHolderGpusToIndexes(info.minors, *gpus, &scanned);
    MergeHolderScan(scanned, protect_, history_.waves, &view_.holders);
    view_.newcomers = FindNewcomers(scan.children, view_.holders);
    if (!scan.parents.empty()) view_.parents = scan.parents;
  }
  std::vector<Holder> current;
  for (const TrackedHolder& t : view_.holders) current.push_back(t.holder);
  // Without an inventory count, the /dev/nvidiaN files say how many GPUs the
  // driver knows: a GPU that fell off the bus still has its device file.
  int expected = job_.host->expected_gpus > 0 ? job_.host->expected_gpus : device_gpus_;
  NumberTheLostGpu(expected, gpus);
  ClassifyGpus(current, expected, threshold_, gpus);
  if (holders && !FindGhostsUnderDaemons(gpus)) return false;
  view_.gpus = *gpus;
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

// A GPU over the threshold that only protected daemons hold (persistenced,
// DCGM hold every GPU at 0 MiB) is a ghost when no process has memory on it:
// asks --query-compute-apps, only when such a GPU exists.
bool Runner::FindGhostsUnderDaemons(std::vector<GpuReading>* gpus) {
  std::vector<int> suspects = GpusHeldOnlyByProtected(view_.holders, *gpus);
  if (suspects.empty()) return true;
  CommandResult result;
  std::string script = "timeout -k 1 " + std::to_string(nvidia_smi_timeout_.count() / 1000) +
                       " " + ComputeAppsCommand() + " </dev/null";
  if (!Exec(script, job_.command_timeout, &result)) return false;
  std::vector<ComputeApp> apps;
  Status status = ParseComputeApps(result.out, result.err, result.exit_code,
                                   ComputeAppsFields(), &apps, nullptr);
  if (status.ok()) MarkGhostsWithoutApps(suspects, apps, gpus);  // else: "busy", the safe reading
  return true;
}

}  // namespace host_cleaner_internal
}  // namespace fleetreap
