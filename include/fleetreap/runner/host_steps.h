// HostSteps: the door through which CleanHost's run reaches one host, one
// method per remote step (and per fused round trip of round_trips.h), each
// returning the step's reply as model values: a HostSnapshot, a
// SignalReply, the units' stops, a /dev/shm step's outcome, the resets. The
// real one (CleanHost's) runs each step's script over a Transport and reads
// the reply with remote's parsers; unit tests of the runner supply the
// values themselves. One object per host run, used by one thread.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/round_trips.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/signal.h"
#include "fleetreap/remote/stop_units.h"
#include "fleetreap/report/report.h"
#include "fleetreap/runner/host_cleaner.h"

namespace fleetreap {

/// Every method returns OK with its outputs filled, or the error that ends
/// the host's run: the transport's (kCommandTimeout, kConnectionLost,
/// kSudo, kHostTimeout...; messages start with the step, "inspect: ") or a
/// reply that cannot be read (kParse). A /dev/shm step's "shm" is filled
/// whenever its own records were read, even when the scan that rode along
/// could not be.
class HostSteps {
 public:
  virtual ~HostSteps() = default;

  /// The step under way ("inspect", "term"...), named in errors.
  virtual void StartStep(const char* step) = 0;

  /// ScanScript: the host as it is now.
  virtual Status Scan(const ScanRequest& request, HostSnapshot* snapshot) = 0;
  /// PerGpuQueryScript: the readings of those of "indexes" that answer.
  virtual Status QueryGpusOneByOne(const std::vector<int>& indexes,
                                   std::vector<GpuReading>* gpus) = 0;
  /// SignalScript: one signal wave.
  virtual Status Signal(const SignalRequest& wave, SignalReply* reply) = 0;
  /// StopUnitsScript: one stop per unit of "units", in order. "audit" gets
  /// whether the stops' audit lines were written (the step's replies carry
  /// theirs: SignalReply, ShmOutput, GpuResetReply).
  virtual Status StopUnits(const std::vector<std::string>& units, std::vector<UnitStop>* stops,
                           AuditOutcome* audit) = 0;
  /// The stops, then the first signal wave, in one round trip.
  virtual Status StopUnitsThenSignal(const std::vector<std::string>& units,
                                     const SignalRequest& wave, std::vector<UnitStop>* stops,
                                     SignalReply* reply, AuditOutcome* audit) = 0;
  /// ShmCleanScript: the /dev/shm clean, or with "dry_run" its listing,
  /// of the candidates "which" lets it remove.
  virtual Status CleanShm(bool dry_run, const ShmSelection& which, ShmOutput* shm) = 0;
  /// The clean (or listing), then the verify's quick scan.
  virtual Status CleanShmThenQuickScan(bool dry_run, const ShmSelection& which,
                                       const ScanRequest& quick, ShmOutput* shm,
                                       HostSnapshot* verify) = 0;
  /// A dry run's inspect: the /dev/shm listing, then the scan "inspect".
  virtual Status ShmListingThenInspect(const ScanRequest& inspect, ShmOutput* shm,
                                       HostSnapshot* snapshot) = 0;
  /// The first re-scan after a wave, the /dev/shm clean and the verify's scan.
  virtual Status RescanShmVerify(const ScanRequest& rescan, const ShmSelection& which,
                                 const ScanRequest& verify, HostSnapshot* rescanned, ShmOutput* shm,
                                 HostSnapshot* verified) = 0;
  /// GpuResetScript: one reset per GPU of "gpus", with "units" (the
  /// protected clients' units) stopped before and started after.
  virtual Status ResetGpus(const std::vector<int>& gpus, const std::vector<std::string>& units,
                           GpuResetReply* reply) = 0;
};

/// CleanHost with every step taken through "steps" (see CleanHost for the
/// report; a step's error becomes the report's status and message).
HostReport CleanHostWith(HostSteps& steps, const HostJob& job);

}  // namespace fleetreap
