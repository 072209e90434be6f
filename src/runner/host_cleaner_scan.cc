// The host_cleaner runner's reading of a host: runs the scan, hands its bytes
// to remote (ReadScan) and the snapshot to the escalation (FoldSnapshot),
// and performs the follow-ups the fold asks for: the per-GPU query after a
// lost GPU, the re-scan with nvidia-smi's table before calling memory a
// ghost. It decides none of them.
#include <algorithm>

#include "fleetreap/escalation/host_fold.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/remote/remote_script.h"
#include "fleetreap/remote/round_trips.h"
#include "fleetreap/remote/scan.h"
#include "host_cleaner_run.h"

namespace fleetreap {
namespace host_cleaner_internal {

using std::chrono::milliseconds;

ScanRequest Runner::Request(const std::vector<std::string>& units, bool holders) const {
  ScanRequest request;
  request.units = units;
  request.nvidia_smi_timeout = nvidia_smi_timeout_;
  request.holders = holders;
  if (holders) request.watch = WatchedParents(view_.holders);
  request.table = table_scan_;
  return request;
}

FoldContext Runner::Context() const {
  FoldContext context;
  context.inspected = escalation_.history().inspected;
  context.waves = escalation_.history().waves;
  context.expected_gpus = job_.host->expected_gpus;
  context.threshold_mib = job_.host->threshold_mib.value_or(playbook_.threshold_mib);
  context.allowances = playbook_.daemon_allowance_mib;
  context.nvidia_smi_timeout = nvidia_smi_timeout_;
  context.table_scan = table_scan_;
  return context;
}

bool Runner::InspectWithShmDryRun(const std::vector<std::string>& units) {
  CommandResult result;
  std::string script = ShmListingThenInspectScript(playbook_.shm_patterns, Request(units, true));
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
  return HostGpusClean(*gpus) || Scan({}, gpus);
}

bool Runner::RunScan(const ScanRequest& request, ScanOutput* scan) {
  CommandResult result;
  // Two nvidia-smi calls, each bounded on the host.
  if (!Exec(ScanScript(request), job_.command_timeout + 2 * nvidia_smi_timeout_, &result)) {
    return false;
  }
  Status status = ParseScanOutput(result.out, scan);
  if (status.ok()) return true;
  return Fail(status.kind(),
              status.message() + (result.err.empty() ? "" : ": " + FirstLine(result.err)));
}

bool Runner::Scan(const std::vector<std::string>& units, std::vector<GpuReading>* gpus,
                  bool holders, const ScanOutput* prefetched) {
  ScanOutput scan;
  if (prefetched != nullptr) {
    scan = *prefetched;
  } else if (!RunScan(Request(units, holders), &scan)) {
    return false;
  }
  HostSnapshot snapshot;
  Status status = ReadScan(scan, &snapshot);
  if (!status.ok()) return Fail(status.kind(), status.message());
  // A holder scan's start: its targets must have been born before it.
  if (scan.holders && scan.clock > 0) scan_start_ = scan.clock;
  const FoldContext context = Context();
  std::vector<int> one_by_one = GpusToQueryOneByOne(snapshot, context, fold_);
  if (!one_by_one.empty() && !QueryGpusOneByOne(one_by_one, &snapshot.gpu_query.gpus)) {
    return false;
  }
  ScanFold fold = FoldSnapshot(snapshot, context, &fold_, &view_);
  report_.nvidia_smi_error = fold_.nvidia_smi_error;
  stop_ladder_ = stop_ladder_ || fold.stops_ladder;
  if (!fold.status.ok()) return Fail(fold.status.kind(), fold.status.message());
  nvidia_smi_failed_ = fold.nvidia_smi_failed;
  report_.units_skipped.insert(report_.units_skipped.end(), fold.units_skipped.begin(),
                               fold.units_skipped.end());
  *gpus = view_.gpus;
  if (!fold.table_rescan) return true;
  table_scan_ = true;
  bool ok = Scan(units, gpus, holders);
  table_scan_ = false;
  return ok;
}

bool Runner::QueryGpusOneByOne(const std::vector<int>& indexes, std::vector<GpuReading>* gpus) {
  CommandResult result;
  milliseconds timeout = job_.command_timeout + nvidia_smi_timeout_;
  if (!Exec(PerGpuQueryScript(indexes, nvidia_smi_timeout_), timeout, &result)) return false;
  Status status = ReadPerGpuQuery(result.out, gpus);
  if (!status.ok()) return Fail(status.kind(), status.message());
  return true;
}

}  // namespace host_cleaner_internal
}  // namespace fleetreap
