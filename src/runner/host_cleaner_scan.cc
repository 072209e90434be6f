// The host_cleaner runner's reading of a host: takes the scan's snapshot
// from HostSteps, hands it to the escalation (FoldSnapshot),
// and performs the follow-ups the fold asks for: the per-GPU query after a
// lost GPU, the re-scan with nvidia-smi's table before calling memory a
// ghost. It decides none of them.
#include <algorithm>

#include "fleetreap/escalation/host_fold.h"
#include "fleetreap/model/gpu_reading.h"
#include "host_cleaner_run.h"

namespace fleetreap {
namespace host_cleaner_internal {

ScanRequest Runner::Request(const std::vector<std::string>& units, bool holders) const {
  ScanRequest request;
  request.units = units;
  request.nvidia_smi_timeout = nvidia_smi_timeout_;
  request.holders = holders;
  if (holders) request.watch = WatchedParents(view_.holders);
  request.table = table_scan_;
  request.readiness = !playbook_.ready.AllOff();
  request.kernel_log = playbook_.ready.xid != CheckMode::kOff;
  // Under a scope the segments the holders hold tell the run's own apart.
  request.shm_files = holders && view_.scoped && !job_.dry_run && playbook_.Runs(Step::kCleanShm) &&
                      !playbook_.shm_patterns.empty() &&
                      playbook_.shm_under_scope == ShmUnderScope::kOwned;
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
  context.ready = playbook_.ready;
  return context;
}

bool Runner::ReadInspect(const std::vector<std::string>& units, const HostSnapshot& snapshot) {
  if (!ReadHost(snapshot, units, &report_.gpus_before, /*holders=*/true)) return false;
  report_.gpus_after = report_.gpus_before;
  return true;
}

bool Runner::QuickRead(const HostSnapshot& quick, std::vector<GpuReading>* gpus) {
  if (!ReadHost(quick, {}, gpus, /*holders=*/false)) return false;
  return HostGpusClean(*gpus) || Scan({}, gpus);
}

bool Runner::Scan(const std::vector<std::string>& units, std::vector<GpuReading>* gpus,
                  bool holders) {
  std::vector<StepReply> replies;
  if (!Check(steps_.Run({Request(units, holders)}, &replies))) return false;
  return ReadHost(ReplyAt<HostSnapshot>(replies, 0), units, gpus, holders);
}

bool Runner::ReadHost(HostSnapshot snapshot, const std::vector<std::string>& units,
                      std::vector<GpuReading>* gpus, bool holders) {
  // A holder scan's start: its targets must have been born before it.
  if (snapshot.holders_scanned && snapshot.clock > 0) scan_start_ = snapshot.clock;
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
  std::vector<StepReply> replies;
  if (!Check(steps_.Run({GpuQueryRequest{indexes, nvidia_smi_timeout_}}, &replies))) return false;
  const std::vector<GpuReading> answered = ReplyAt<std::vector<GpuReading>>(replies, 0);
  gpus->insert(gpus->end(), answered.begin(), answered.end());
  return true;
}

}  // namespace host_cleaner_internal
}  // namespace fleetreap
