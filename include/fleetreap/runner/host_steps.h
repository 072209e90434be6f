// HostSteps: the door through which CleanHost's run reaches one host: one
// round trip at a time, each a batch of steps (remote/batch.h) that the
// escalation chose to ride together, answered with one reply per step as
// model values: a HostSnapshot, a SignalReply, the units' stops, a /dev/shm
// step's outcome, the resets. The real one (CleanHost's) runs the batch's
// script over a Transport and reads the reply with ParseBatch; unit tests of
// the runner supply the values themselves. One object per host run, used by
// one thread.
#pragma once

#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/remote/batch.h"
#include "fleetreap/report/report.h"
#include "fleetreap/runner/host_cleaner.h"

namespace fleetreap {

/// Run returns OK with one reply per request, in order, or the error that
/// ends the host's run: the transport's (kCommandTimeout, kConnectionLost,
/// kSudo, kHostTimeout...; messages start with the step, "inspect: ") or a
/// reply that cannot be read (kParse). When only a scan's records could not
/// be read (ReadScan), "replies" holds the other steps' replies, so a
/// /dev/shm step's outcome is known even then; otherwise it is empty.
class HostSteps {
 public:
  virtual ~HostSteps() = default;

  /// The step under way ("inspect", "term"...), named in errors.
  virtual void StartStep(const char* step) = 0;

  /// The steps of "batch" in one round trip, in order.
  virtual Status Run(const std::vector<StepRequest>& batch, std::vector<StepReply>* replies) = 0;
};

/// CleanHost with every step taken through "steps" (see CleanHost for the
/// report; a step's error becomes the report's status and message).
HostReport CleanHostWith(HostSteps& steps, const HostJob& job);

}  // namespace fleetreap
