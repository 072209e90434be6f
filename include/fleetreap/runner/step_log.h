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

/// Logs DescribeStep at info, as "HOST: ...", when info is enabled.
void LogStep(const std::string& host, const Action& action, const HostView& view,
             std::chrono::milliseconds took, const std::string& error);

/// Logs at debug, when debug is enabled, "HOST: run (timeout N ms): SCRIPT"
/// and then "HOST: reply: exit N, stdout (B bytes): ..., stderr: ...".
void LogCommand(const std::string& host, const std::string& script,
                std::chrono::milliseconds timeout);
void LogReply(const std::string& host, const CommandResult& result);

}  // namespace fleetreap
