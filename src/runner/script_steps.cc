// ScriptSteps (script_steps.h): each step's script run over the transport,
// its reply read into model values.
#include "script_steps.h"

#include <algorithm>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/remote/batch.h"
#include "fleetreap/runner/step_log.h"

namespace fleetreap {

using std::chrono::duration_cast;
using std::chrono::milliseconds;

namespace {

using TimePoint = std::chrono::steady_clock::time_point;

// What a reply that ended otherwise than by exiting means, "" when it exited.
Status EndError(const CommandResult& result, const std::string& step, milliseconds timeout) {
  switch (result.end) {
    case CommandEnd::kExited: return Status::Ok();
    case CommandEnd::kTimedOut:
      return Status::Error(ErrorKind::kCommandTimeout, step + "command did not finish within " +
                                                           std::to_string(timeout.count()) + "ms");
    case CommandEnd::kConnectionLost:
      return Status::Error(ErrorKind::kConnectionLost, step + result.error);
    case CommandEnd::kSignaled:
      return Status::Error(ErrorKind::kCommandFailed,
                           step + "remote command killed by SIG" + result.signal);
    case CommandEnd::kNotStarted:
      return Status::Error(ErrorKind::kCommandFailed,
                           step + "remote command not started: " + result.error);
    case CommandEnd::kOutputLimit: return Status::Error(ErrorKind::kParse, step + result.error);
    case CommandEnd::kNoStatus:
      return Status::Error(ErrorKind::kCommandFailed, step + result.error);
  }
  return Status::Ok();
}

}  // namespace

milliseconds NvidiaSmiTimeoutFor(milliseconds command_timeout) {
  return std::clamp(command_timeout / 2, milliseconds(1000), milliseconds(30000));
}

milliseconds GpuResetTimeoutFor(milliseconds nvidia_smi_timeout) {
  return std::max(nvidia_smi_timeout, milliseconds(30000));
}

ScriptSteps::ScriptSteps(Transport& transport, const HostJob& job, Clock& clock)
    : transport_(transport),
      job_(job),
      clock_(clock),
      nvidia_smi_timeout_(NvidiaSmiTimeoutFor(job.command_timeout)) {}

Status ScriptSteps::Exec(const char* what, const std::string& script, milliseconds timeout,
                         CommandResult* result) {
  TimePoint now = clock_.Now();
  if (now >= job_.deadline) return Status::Error(ErrorKind::kHostTimeout, "host deadline reached");
  if (job_.deadline != TimePoint::max()) {
    timeout = std::min(timeout, duration_cast<milliseconds>(job_.deadline - now));
  }
  const std::string name = std::string(step_) + ": " + what;
  LogCommand(job_.host->name, name, script, timeout);
  transport_.NameNextCommand(name);
  *result = transport_.Run(BoundedCommand(script, timeout, job_.become), timeout);
  LogReply(job_.host->name, *result);
  // Each error names the step: "inspect: stdout exceeded 4 MiB, stopped reading".
  const std::string step = std::string(step_) + ": ";
  Status status = EndError(*result, step, timeout);
  if (!status.ok()) return status;
  if (IsSudoRefusal(*result)) return Status::Error(ErrorKind::kSudo, FirstLine(result->err));
  if (result->exit_code == 124 || result->exit_code == 137) {
    return Status::Error(ErrorKind::kCommandTimeout, step + "remote command ran past " +
                                                         std::to_string(timeout.count()) + "ms");
  }
  Status started = CheckStartRecord(&result->out, result->err);
  if (!started.ok()) return Status::Error(started.kind(), step + started.message());
  return Status::Ok();
}

milliseconds GpuResetStepBound(size_t gpus, bool units, milliseconds unit_timeout,
                               milliseconds nvidia_smi_timeout) {
  // Each call of the script is bounded on the host by timeout -k 2: stop and
  // start by "unit_timeout", the two is-active by 10 s; per GPU the query of
  // its compute processes and the reset; 10 s for the login and sudo.
  const milliseconds kill_after(2000);
  const milliseconds unit_steps =
      units ? 2 * (unit_timeout + kill_after) + 2 * (milliseconds(10000) + kill_after)
            : milliseconds(0);
  const milliseconds per_gpu = GpuResetTimeoutFor(nvidia_smi_timeout) + nvidia_smi_timeout;
  return unit_steps + (per_gpu + 2 * kill_after) * static_cast<int>(gpus) + milliseconds(10000);
}

milliseconds ScriptSteps::Allowance(const std::vector<StepRequest>& batch, size_t i) const {
  const StepRequest& step = batch[i];
  if (const auto* wave = std::get_if<SignalRequest>(&step)) return wave->wait;
  if (const auto* stop = std::get_if<StopUnitsRequest>(&step)) {
    return (stop->unit_timeout + milliseconds(3000)) * static_cast<int>(stop->units.size());
  }
  if (const auto* scan = std::get_if<ScanRequest>(&step)) {
    return i > 0 && !scan->holders ? nvidia_smi_timeout_ : 2 * nvidia_smi_timeout_;
  }
  if (std::holds_alternative<ShmRequest>(step) && i + 1 < batch.size()) return milliseconds(0);
  return nvidia_smi_timeout_;
}

milliseconds ScriptSteps::Bound(const std::vector<StepRequest>& batch) const {
  if (batch.size() == 1) {
    if (const auto* reset = std::get_if<ResetRequest>(&batch[0])) {
      return GpuResetStepBound(reset->gpus.size(), !reset->units.empty(), reset->unit_timeout,
                               nvidia_smi_timeout_);
    }
  }
  milliseconds bound = job_.command_timeout;
  for (size_t i = 0; i < batch.size(); ++i) bound += Allowance(batch, i);
  return bound;
}

// The reset step has its own bound, sized for stop + resets + start: it
// begins only when the host deadline leaves all of it, so the deadline never
// cuts it between the stop and the start.
Status ScriptSteps::ResetFits(milliseconds all) const {
  const TimePoint now = clock_.Now();
  if (job_.deadline == TimePoint::max() || job_.deadline - now >= all) return Status::Ok();
  const milliseconds left =
      job_.deadline > now ? duration_cast<milliseconds>(job_.deadline - now) : milliseconds(0);
  return Status::Error(ErrorKind::kHostTimeout,
                       "the host deadline: the reset (stop, reset, start) needs up to " +
                           std::to_string(all.count() / 1000) + "s and " +
                           std::to_string(left.count() / 1000) + "s are left; not started");
}

Status ScriptSteps::Run(const std::vector<StepRequest>& batch, std::vector<StepReply>* replies) {
  replies->clear();
  const milliseconds bound = Bound(batch);
  if (std::any_of(batch.begin(), batch.end(),
                  [](const StepRequest& s) { return std::holds_alternative<ResetRequest>(s); })) {
    Status fits = ResetFits(bound);
    if (!fits.ok()) return fits;
  }
  CommandResult result;
  Status status = Exec(BatchName(batch).c_str(), BatchScript(batch), bound, &result);
  if (!status.ok()) return status;
  status = ParseBatch(result.out, batch, replies);
  if (status.ok() || !replies->empty() || result.err.empty()) return status;
  // A reply that breaks its grammar: the host's stderr often says why.
  return Status::Error(status.kind(), status.message() + ": " + FirstLine(result.err));
}

}  // namespace fleetreap
