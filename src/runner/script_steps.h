// ScriptSteps: the HostSteps of a real run: each step's script (scan_script.h, signal.h...,
// round_trips.h) run over a Transport, bounded by BoundedCommand and the
// host's deadline, logged (step_log.h), its reply read by remote's parsers.
// Private to src/runner/. Holds references to the transport, the job and the
// clock, which must outlive it; one per host run, used by one thread.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/clock.h"
#include "fleetreap/runner/host_steps.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

/// Each nvidia-smi call's bound on the host: half the command timeout,
/// within 1 s to 30 s.
std::chrono::milliseconds NvidiaSmiTimeoutFor(std::chrono::milliseconds command_timeout);

/// Each GPU reset's bound on the host: a reset normally takes seconds; one
/// that hangs is given 30 s (or the nvidia-smi bound, if longer).
std::chrono::milliseconds GpuResetTimeoutFor(std::chrono::milliseconds nvidia_smi_timeout);
/// The reset step's own bound: the sum of the bounds of every call its
/// script makes (GpuResetScript), for "gpus" GPUs, with or without units.
std::chrono::milliseconds GpuResetStepBound(size_t gpus, bool units,
                                            std::chrono::milliseconds unit_timeout,
                                            std::chrono::milliseconds nvidia_smi_timeout);

class ScriptSteps : public HostSteps {
 public:
  ScriptSteps(Transport& transport, const HostJob& job, Clock& clock);

  void StartStep(const char* step) override { step_ = step; }
  Status Scan(const ScanRequest& request, HostSnapshot* snapshot) override;
  Status QueryGpusOneByOne(const std::vector<int>& indexes, std::vector<GpuReading>* gpus) override;
  Status Signal(const SignalRequest& wave, SignalReply* reply) override;
  Status StopUnits(const std::vector<std::string>& units, std::vector<UnitStop>* stops,
                   AuditOutcome* audit) override;
  Status StopUnitsThenSignal(const std::vector<std::string>& units, const SignalRequest& wave,
                             std::vector<UnitStop>* stops, SignalReply* reply,
                             AuditOutcome* audit) override;
  Status CleanShm(bool dry_run, const ShmSelection& which, ShmOutput* shm) override;
  Status CleanShmThenQuickScan(bool dry_run, const ShmSelection& which, const ScanRequest& quick,
                               ShmOutput* shm, HostSnapshot* verify) override;
  Status ShmListingThenInspect(const ScanRequest& inspect, ShmOutput* shm,
                               HostSnapshot* snapshot) override;
  Status RescanShmVerify(const ScanRequest& rescan, const ShmSelection& which,
                         const ScanRequest& verify, HostSnapshot* rescanned, ShmOutput* shm,
                         HostSnapshot* verified) override;
  Status ResetGpus(const std::vector<int>& gpus, const std::vector<std::string>& units,
                   GpuResetReply* reply) override;

 private:
  // Runs "script" bounded by "timeout" (cut to the deadline): the reply's
  // bytes past the start record, or the error that ends the run. "what" names
  // the command in -vv and --log-dir lines, after the step ("term: signal").
  Status Exec(const char* what, const std::string& script, std::chrono::milliseconds timeout,
              CommandResult* result);
  // The stops' bound: each unit's stop timeout and 3 s, plus the command's.
  std::chrono::milliseconds StopTimeout(size_t units) const;

  Transport& transport_;
  const HostJob& job_;
  Clock& clock_;
  std::chrono::milliseconds nvidia_smi_timeout_;
  const char* step_ = "inspect";
};

}  // namespace fleetreap
