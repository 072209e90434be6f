// ScriptSteps: the HostSteps of a real run: each batch's script (batch.h)
// run over a Transport, bounded by BoundedCommand and the
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
  Status Run(const std::vector<StepRequest>& batch, std::vector<StepReply>* replies) override;

 private:
  // Runs "script" bounded by "timeout" (cut to the deadline): the reply's
  // bytes past the start record, or the error that ends the run. "what" names
  // the command in -vv and --log-dir lines, after the step ("term: signal").
  Status Exec(const char* what, const std::string& script, std::chrono::milliseconds timeout,
              CommandResult* result);
  // The batch's bound: the command timeout, plus what each step may take on
  // the host, as the round trips had it before they were batches: a scan
  // its two nvidia-smi calls (one when it rides after another step without
  // the holder walk), a per-GPU query or a /dev/shm step one (a /dev/shm
  // step none when a step follows it), a wave its wait, each unit's stop its
  // timeout and 3 s. A reset has its own (GpuResetStepBound).
  std::chrono::milliseconds Bound(const std::vector<StepRequest>& batch) const;
  std::chrono::milliseconds Allowance(const std::vector<StepRequest>& batch, size_t i) const;
  // kHostTimeout when the deadline leaves less than a reset's whole bound.
  Status ResetFits(std::chrono::milliseconds all) const;

  Transport& transport_;
  const HostJob& job_;
  Clock& clock_;
  std::chrono::milliseconds nvidia_smi_timeout_;
  const char* step_ = "inspect";
};

}  // namespace fleetreap
