// ScriptSteps (script_steps.h): each step's script run over the transport,
// its reply read into model values.
#include "script_steps.h"

#include <algorithm>

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/remote/scan.h"
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

Status ScriptSteps::Scan(const ScanRequest& request, HostSnapshot* snapshot) {
  CommandResult result;
  // Two nvidia-smi calls, each bounded on the host.
  Status status =
      Exec("scan", ScanScript(request), job_.command_timeout + 2 * nvidia_smi_timeout_, &result);
  if (!status.ok()) return status;
  ScanOutput scan;
  status = ParseScanOutput(result.out, &scan);
  if (!status.ok()) {
    return Status::Error(
        status.kind(), status.message() + (result.err.empty() ? "" : ": " + FirstLine(result.err)));
  }
  return ReadScan(scan, snapshot);
}

Status ScriptSteps::QueryGpusOneByOne(const std::vector<int>& indexes,
                                      std::vector<GpuReading>* gpus) {
  CommandResult result;
  milliseconds timeout = job_.command_timeout + nvidia_smi_timeout_;
  Status status =
      Exec("nvidia-smi per GPU", PerGpuQueryScript(indexes, nvidia_smi_timeout_), timeout, &result);
  if (!status.ok()) return status;
  return ReadPerGpuQuery(result.out, gpus);
}

Status ScriptSteps::Signal(const SignalRequest& wave, SignalReply* reply) {
  CommandResult result;
  Status status = Exec("signal", SignalScriptFor(wave), wave.wait + job_.command_timeout, &result);
  if (!status.ok()) return status;
  return ParseSignalOutput(result.out, reply);
}

milliseconds ScriptSteps::StopTimeout(size_t units) const {
  return (job_.playbook->unit_stop_timeout + milliseconds(3000)) * static_cast<int>(units) +
         job_.command_timeout;
}

Status ScriptSteps::StopUnits(const std::vector<std::string>& units, std::vector<UnitStop>* stops,
                              AuditOutcome* audit) {
  CommandResult result;
  Status status =
      Exec("stop units", StopUnitsScript(units, job_.playbook->unit_stop_timeout, job_.audit),
           StopTimeout(units.size()), &result);
  if (!status.ok()) return status;
  return ParseStopUnitsOutput(result.out, units, stops, audit);
}

Status ScriptSteps::StopUnitsThenSignal(const std::vector<std::string>& units,
                                        const SignalRequest& wave, std::vector<UnitStop>* stops,
                                        SignalReply* reply, AuditOutcome* audit) {
  CommandResult result;
  const std::string script =
      StopUnitsThenSignalScript(units, job_.playbook->unit_stop_timeout, wave);
  Status status =
      Exec("stop units, signal", script, StopTimeout(units.size()) + wave.wait, &result);
  if (!status.ok()) return status;
  return ParseStopAndSignalOutput(result.out, units, stops, reply, audit);
}

Status ScriptSteps::CleanShm(bool dry_run, const ShmSelection& which, ShmOutput* shm) {
  CommandResult result;
  Status status =
      Exec(dry_run ? "/dev/shm listing" : "/dev/shm clean",
           ShmCleanScript(job_.playbook->shm_patterns, dry_run, HostPaths(), job_.audit, which),
           job_.command_timeout + nvidia_smi_timeout_, &result);
  if (!status.ok()) return status;
  return ParseShmOutput(result.out, shm, nullptr);
}

Status ScriptSteps::CleanShmThenQuickScan(bool dry_run, const ShmSelection& which,
                                          const ScanRequest& quick, ShmOutput* shm,
                                          HostSnapshot* verify) {
  CommandResult result;
  const std::string script = ShmThenQuickScanScript(job_.playbook->shm_patterns, dry_run, quick,
                                                    HostPaths(), job_.audit, which);
  Status status = Exec(dry_run ? "/dev/shm listing, scan" : "/dev/shm clean, scan", script,
                       job_.command_timeout + nvidia_smi_timeout_, &result);
  if (!status.ok()) return status;
  ScanOutput scan;
  ShmOutput read;
  status = ParseShmOutput(result.out, &read, &scan);
  if (!status.ok()) return status;
  *shm = read;
  return ReadScan(scan, verify);
}

Status ScriptSteps::ShmListingThenInspect(const ScanRequest& inspect, ShmOutput* shm,
                                          HostSnapshot* snapshot) {
  CommandResult result;
  const std::string script = ShmListingThenInspectScript(job_.playbook->shm_patterns, inspect);
  Status status = Exec("/dev/shm listing, scan", script,
                       job_.command_timeout + 2 * nvidia_smi_timeout_, &result);
  if (!status.ok()) return status;
  ScanOutput scan;
  ShmOutput read;
  status = ParseShmOutput(result.out, &read, &scan);
  if (!status.ok()) return status;
  *shm = read;
  return ReadScan(scan, snapshot);
}

Status ScriptSteps::RescanShmVerify(const ScanRequest& rescan, const ShmSelection& which,
                                    const ScanRequest& verify, HostSnapshot* rescanned,
                                    ShmOutput* shm, HostSnapshot* verified) {
  CommandResult result;
  const std::string script = RescanShmVerifyScript(rescan, job_.playbook->shm_patterns, verify,
                                                   HostPaths(), job_.audit, which);
  Status status = Exec("scan, /dev/shm clean, scan", script,
                       job_.command_timeout + 3 * nvidia_smi_timeout_, &result);
  if (!status.ok()) return status;
  ScanOutput first, second;
  ShmOutput read;
  status = ParseRescanShmVerifyOutput(result.out, &first, &read, &second);
  if (!status.ok()) return status;
  *shm = read;
  status = ReadScan(first, rescanned);
  if (status.ok()) status = ReadScan(second, verified);
  return status;
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

Status ScriptSteps::ResetGpus(const std::vector<int>& gpus, const std::vector<std::string>& units,
                              GpuResetReply* reply) {
  CommandResult result;
  // The step has its own bound, sized for stop + resets + start: it begins
  // only when the host deadline leaves all of it, so the deadline never cuts
  // it between the stop and the start.
  const milliseconds all = GpuResetStepBound(gpus.size(), !units.empty(),
                                             job_.playbook->unit_stop_timeout, nvidia_smi_timeout_);
  const TimePoint now = clock_.Now();
  if (job_.deadline != TimePoint::max() && job_.deadline - now < all) {
    const milliseconds left =
        job_.deadline > now ? duration_cast<milliseconds>(job_.deadline - now) : milliseconds(0);
    return Status::Error(ErrorKind::kHostTimeout,
                         "the host deadline: the reset (stop, reset, start) needs up to " +
                             std::to_string(all.count() / 1000) + "s and " +
                             std::to_string(left.count() / 1000) + "s are left; not started");
  }
  Status status =
      Exec("GPU reset",
           GpuResetScript(gpus, GpuResetTimeoutFor(nvidia_smi_timeout_), units,
                          job_.playbook->unit_stop_timeout, job_.audit, nvidia_smi_timeout_),
           all, &result);
  if (!status.ok()) return status;
  return ParseGpuResetOutput(result.out, reply);
}

}  // namespace fleetreap
