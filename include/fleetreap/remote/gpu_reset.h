// GpuReset: the GPU reset step, its script (gpu_reset.cc) and the parser of
// its reply (gpu_reset_output.cc).
// Unit names go through ShellQuote. Pure functions; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/remote/audit.h"

namespace fleetreap {

/// Runs "nvidia-smi --gpu-reset -i N" for each GPU in turn, each only when
/// "nvidia-smi --query-compute-apps=pid -i N" (bounded by "query_timeout")
/// exits 0 and lists no process; else prints "busy N RC:PIDS" for it. With
/// "units" (the units of the daemons that hold the GPUs: NVIDIA's procedure)
/// a guard starts first, in a session of its own, that starts the units
/// again once the script's shell has ended, however it ended (the step's
/// bound, Ctrl-C, a dropped connection); "guard RC:" says whether it runs,
/// and nothing is stopped when it does not. Then "systemctl stop" of the
/// units ("stop RC:TEXT") and their states ("stopped RC:STATES"); the resets
/// run only when the stop exited 0 and every unit reads inactive or failed.
/// Then "systemctl start" ("start RC:TEXT") and "systemctl is-active"
/// ("active RC:STATES", one state a line, in the units' order), each one
/// call bounded by "unit_timeout" (10 s for is-active), and the guard ends.
/// Then (with "audit"'s run id) "audit N RC" for the lines
/// "action=stop_unit|gpu_reset|start_unit ...", then "end".
std::string GpuResetScript(const std::vector<int>& gpus, std::chrono::milliseconds per_gpu,
                           const std::vector<std::string>& units = {},
                           std::chrono::milliseconds unit_timeout = std::chrono::seconds(30),
                           const AuditRequest& audit = AuditRequest(),
                           std::chrono::milliseconds query_timeout = std::chrono::seconds(30));

struct GpuReset {
  int gpu = -1;
  int exit_code = -1;   // nvidia-smi --gpu-reset's; -1 when not tried
  std::string message;  // the tool's output, lines joined with "; "
  /// Why the reset was not tried ("" when it was): nvidia-smi lists a
  /// compute process on the GPU, or could not list them.
  std::string refused;
};
/// GpuResetScript's reply. An exit code is -1 where its record is absent
/// (no units; or the guard did not start, so nothing was stopped).
struct GpuResetReply {
  int guard_exit = -1;  // 0: the guard that starts the units again runs
  int stop_exit = -1;
  std::string stop_text;
  /// is-active's states right after the stop, in the units' order.
  std::vector<std::string> after_stop;
  std::vector<GpuReset> resets;  // none when the stop failed or left one active
  int start_exit = -1;
  std::string start_text;
  std::vector<std::string> active;  // is-active's states, in the units' order
  AuditOutcome audit;
};
/// Parses GpuResetScript's stdout.
[[nodiscard]] Status ParseGpuResetOutput(const std::string& out, GpuResetReply* reply);
/// The same, the resets alone; "audit" (may be null) gets the audit outcome.
[[nodiscard]] Status ParseGpuResetOutput(const std::string& out, std::vector<GpuReset>* resets,
                                         AuditOutcome* audit = nullptr);

}  // namespace fleetreap
