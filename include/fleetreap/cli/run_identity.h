// RunIdentity: who and what a run is, as the hosts' audit lines
// (remote/audit.h) and every report name it: a run id, the controller's
// host name and the operator. Pure apart from RunAuditFor (reads the clock,
// a random device, the host name and the user database); thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "fleetreap/config/config_file.h"
#include "fleetreap/remote/audit.h"

namespace fleetreap {

/// "20261202T061902Z-4f1c2a": the UTC second the run began and 24 random
/// bits, so two runs started in the same second on different controllers
/// still differ.
std::string FormatRunId(std::chrono::system_clock::time_point start, uint32_t random);

/// The operator's name: SUDO_USER when "uid" is root and "env" has one
/// ("alice via sudo"), else "user" (the name of the real uid), else the uid.
std::string OperatorName(unsigned uid, const std::string& user, const Environment& env);

/// A new run id (now), this machine's host name and the operator.
AuditRequest RunAuditFor(const Environment& env);

}  // namespace fleetreap
