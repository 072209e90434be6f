// RoundTrips: the steps that ride together in one round trip
// (escalation.h's Action::fused), each a whole script that owns its final
// "end" record, with the parser that reads its reply into typed outputs.
// The runner runs them as they are; it never joins script text. Pure
// functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/model/target.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_output.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/stop_units.h"

namespace fleetreap {

/// One signal wave, as SignalScript takes it.
struct SignalRequest {
  std::string signal = "TERM";  // "TERM" or "KILL"
  std::vector<Target> targets;
  std::chrono::milliseconds wait{0};
  std::chrono::milliseconds poll{100};
  std::vector<int> parents;  // the targets' parents, watched
  AuditRequest audit = {};   // the run and each target's fields, for the audit lines
  uint64_t scan_start = 0;   // ScanOutput::clock of the scan that found the targets; 0 none
};

/// SignalScript for "wave".
std::string SignalScriptFor(const SignalRequest& wave, const HostPaths& paths = HostPaths());

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
