// RoundTrips: the fused round trips as they were written before batches
// (batch.h), each a whole script with the parser of its reply. The runner
// no longer calls them: BatchScript and ParseBatch carry every round trip,
// and tests/unit/remote/batch_test.cc pins each batch to these bytes;
// dump_remote_scripts and the process budget tests still use them. Pure
// functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/model/target.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/batch.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/stop_units.h"

namespace fleetreap {

/// StopUnitsScript's stops, then the first signal wave (it targets the
/// holders the inspect found either way); read by ParseStopAndSignalOutput.
/// The stops' audit lines are the wave's run's (wave.audit).
std::string StopUnitsThenSignalScript(const std::vector<std::string>& units,
                                      std::chrono::milliseconds unit_timeout,
                                      const SignalRequest& wave,
                                      const HostPaths& paths = HostPaths());

/// A dry run's inspect: the /dev/shm listing (nothing removed), then the
/// scan, whose holder walk takes the listing's fd pass (where it ran: there
/// were candidates) as its own; read by ParseShmOutput with a scan.
std::string ShmListingThenInspectScript(const std::vector<std::string>& patterns,
                                        const ScanRequest& inspect,
                                        const HostPaths& paths = HostPaths());

/// The /dev/shm clean (or, with "dry_run", its listing; "selection" as
/// ShmCleanScript's), then the verify's quick scan ("verify", its holder part off whatever it
/// says); read by ParseShmOutput with a scan.
std::string ShmThenQuickScanScript(const std::vector<std::string>& patterns, bool dry_run,
                                   const ScanRequest& verify, const HostPaths& paths = HostPaths(),
                                   const AuditRequest& audit = AuditRequest(),
                                   const ShmSelection& selection = ShmSelection());

/// The first re-scan after a wave, the /dev/shm clean and the verify's scan;
/// read by ParseRescanShmVerifyOutput.
std::string RescanShmVerifyScript(const ScanRequest& rescan,
                                  const std::vector<std::string>& patterns,
                                  const ScanRequest& verify, const HostPaths& paths = HostPaths(),
                                  const AuditRequest& audit = AuditRequest(),
                                  const ShmSelection& selection = ShmSelection());

/// Parses StopUnitsThenSignalScript(units, ...)'s stdout: the stops, then
/// the signal wave; "audit" (may be null) gets the stops' audit outcome, the
/// signal's is in "signal".
[[nodiscard]] Status ParseStopAndSignalOutput(const std::string& out,
                                              const std::vector<std::string>& units,
                                              std::vector<UnitStop>* stops, SignalReply* signal,
                                              AuditOutcome* audit = nullptr);

/// Parses ScanScript (the re-scan) + ShmCleanScript + ScanScript (a quick
/// verify) run in one round trip: the first scan's records, the shm
/// records, then the second scan's.
[[nodiscard]] Status ParseRescanShmVerifyOutput(const std::string& out, ScanOutput* rescan,
                                                ShmOutput* shm, ScanOutput* verify);

}  // namespace fleetreap
