// StepLog: what -v and -vv say about one host while its ladder runs. -v
// (spdlog info) gets one line per step as it ends: the step, the PIDs and
// signal it aimed at, how long it could wait, and what it found; -vv (spdlog
// debug) also each command fleetreap runs on the host and the host's raw
// reply (control bytes escaped, each part cut at 4 KiB). Lines go through
// spdlog's default logger, so to stderr (above the live line with
// MakeProgressLogSink). Pure formatting plus those calls; thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/host_view.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

/// One line on a finished step, without the host name:
/// "term: TERM to pids 4001,4002 (2), wait up to 10.0 s: 1 exited, 1 left; GPUs 7 clean, 1 busy
/// (10.0 s)"; "inspect: 9 holders (8 to act on, 1 protected); GPUs 8 busy (0.3 s)";
/// ", failed: <error>" is added when "error" is not empty.
std::string DescribeStep(const Action& action, const HostView& view, std::chrono::milliseconds took,
                         const std::string& error);

/// What a step does and may wait for, for the live line: "inspect",
/// "term 8 pids, up to 10.0 s", "stop_units+term 8 pids, up to 10.0 s",
/// "rescan+clean_shm+verify".
std::string StepBrief(const Action& action);

/// One host's -v step lines, with a run of identical re-scan lines (the
/// restart watch's, one every settle) said once and then counted:
/// "rescan: the same 9 more times (18.0 s)". One per host run; not
/// thread-safe.
class StepLines {
 public:
  /// The lines a finished step adds: DescribeStep's, none while a re-scan
  /// repeats the line before it (but for its time), or first the count of
  /// the repeats that the new line ends.
  std::vector<std::string> Add(const Action& action, const HostView& view,
                               std::chrono::milliseconds took, const std::string& error);
  /// The count of a run of repeats still unsaid, or nothing.
  std::vector<std::string> Close();

 private:
  std::string last_;  // the last line said, without its time
  int repeats_ = 0;
  std::chrono::milliseconds repeated_{0};
};

/// Logs StepLines::Add's lines at info, each as "HOST: ...", when info is
/// enabled.
void LogStep(const std::string& host, StepLines& lines, const Action& action, const HostView& view,
             std::chrono::milliseconds took, const std::string& error);
/// Logs StepLines::Close's line, when info is enabled.
void LogStepsEnd(const std::string& host, StepLines& lines);

/// Logs at debug, when debug is enabled, "HOST: run NAME (timeout N ms): SCRIPT",
/// NAME the step and the command ("term: signal"), and then "HOST: reply:
/// exit N, stdout (B bytes): ..., stderr: ...".
void LogCommand(const std::string& host, const std::string& name, const std::string& script,
                std::chrono::milliseconds timeout);
void LogReply(const std::string& host, const CommandResult& result);

}  // namespace fleetreap
