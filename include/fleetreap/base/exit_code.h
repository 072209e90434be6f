// Exit codes: what fleetreap's process status means, in one place for the
// command line (usage, data errors) and the report (the dirty and
// unreachable bits of a run). sysexits.h values where one fits. Constants
// only; thread-safe.
#pragma once

namespace fleetreap {

constexpr int kExitClean = 0;
constexpr int kExitDirty = 1;        // bit: a reached host is not clean
constexpr int kExitUnreachable = 2;  // bit: a host unreachable, failed or not started
constexpr int kExitStopped = 4;      // bit: --max-fail stopped the waves; hosts not started
constexpr int kExitUsage = 64;       // EX_USAGE
constexpr int kExitDataErr = 65;     // EX_DATAERR: inventory or playbook
constexpr int kExitSoftware = 70;    // EX_SOFTWARE: internal error
constexpr int kExitConfig = 78;      // EX_CONFIG: a config file or FLEETREAP_* default

}  // namespace fleetreap
