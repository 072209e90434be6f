#include "fleetreap/remote/round_trips.h"

#include "fleetreap/remote/signal.h"
#include "prelude.h"
#include "scan_records.h"
#include "step_records.h"

namespace fleetreap {

using remote_script_internal::ShmCleanRecords;
using remote_script_internal::StopUnitsRecords;

std::string StopUnitsThenSignalScript(const std::vector<std::string>& units,
                                      std::chrono::milliseconds unit_timeout,
                                      const SignalRequest& wave, const HostPaths& paths) {
  return StopUnitsRecords(units, unit_timeout, wave.audit) + SignalScriptFor(wave, paths);
}

std::string ShmListingThenInspectScript(const std::vector<std::string>& patterns,
                                        const ScanRequest& inspect, const HostPaths& paths) {
  // RW: the listing's fd pass, where it ran, is the inspect's (ScanScript's walk).
  return ShmCleanRecords(patterns, /*dry_run=*/true, paths, AuditRequest()) + "RW=1\n" +
         ScanScript(inspect, paths);
}

std::string ShmThenQuickScanScript(const std::vector<std::string>& patterns, bool dry_run,
                                   const ScanRequest& verify, const HostPaths& paths,
                                   const AuditRequest& audit, const ShmSelection& selection) {
  ScanRequest quick = verify;
  quick.holders = false;
  return ShmCleanRecords(patterns, dry_run, paths, audit, selection) + ScanScript(quick, paths);
}

std::string RescanShmVerifyScript(const ScanRequest& rescan,
                                  const std::vector<std::string>& patterns,
                                  const ScanRequest& verify, const HostPaths& paths,
                                  const AuditRequest& audit, const ShmSelection& selection) {
  return ScanScript(rescan, paths) +
         ShmCleanRecords(patterns, /*dry_run=*/false, paths, audit, selection) +
         ScanScript(verify, paths);
}

Status ParseStopAndSignalOutput(const std::string& out, const std::vector<std::string>& units,
                                std::vector<UnitStop>* stops, SignalReply* signal,
                                AuditOutcome* audit) {
  stops->clear();
  *signal = SignalReply();
  if (audit != nullptr) *audit = AuditOutcome();
  return ParseHostRecords(out, "stop units and signal", [&](RecordReader& reader) {
    Status status = TakeStopRecords(reader, units, stops, audit);
    return status.ok() ? TakeSignalRecords(reader, signal) : status;
  });
}

Status ParseRescanShmVerifyOutput(const std::string& out, ScanOutput* rescan, ShmOutput* shm,
                                  ScanOutput* verify) {
  *rescan = ScanOutput();
  *shm = ShmOutput();
  *verify = ScanOutput();
  return ParseHostRecords(out, "rescan, shm and verify", [&](RecordReader& reader) {
    Status status = ParseScanRecords(reader, rescan);
    if (status.ok()) status = TakeShmRecords(reader, shm);
    return status.ok() ? ParseScanRecords(reader, verify) : status;
  });
}

}  // namespace fleetreap
