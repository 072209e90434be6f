// The words for a host's findings (model/host_finding.h): each kind is
// worded here once, and every report takes a host's one-line reason and its
// notes from here. Pure functions of report data; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/model/host_finding.h"
#include "fleetreap/report/report.h"

namespace fleetreap {

/// One sentence for "finding": "unkillable holder left: pid 7 (python3) in
/// state D", "pid 812 (python3), started by 500 (supervisord) after its GPU
/// holder was signalled, holds no GPU yet". The host's own text in it
/// (comms, a tool's message) is as read; renderers make it safe.
std::string HostFindingText(const HostFinding& finding);

/// The host's one-line reason: its error_message (a transport failure, or
/// a report read back from JSON), else the text of its finding marked
/// "reason"; "" when neither.
std::string HostMessage(const HostReport& host);

/// A cause finding's words for a group of hosts that share it, with
/// "count" holders each ("8", "6-8") and nothing that differs from host to
/// host: "8 holders outlived the stop of unit vllm.service
/// (KillMode=process), still in its cgroup: set KillMode=control-group (or
/// mixed) in the unit".
std::string CauseSummary(const HostFinding& cause, const std::string& count);

/// The text of the host's cause finding ("cause: 8 holders outlived the
/// stop of unit vllm.service (KillMode=process), ...: set KillMode=..."),
/// "" when it has none.
std::string HostCauseText(const HostReport& host);

/// The host's notes, then the text of each finding marked "note", in order.
std::vector<std::string> HostNotes(const HostReport& host);

}  // namespace fleetreap
