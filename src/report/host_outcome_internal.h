// The pieces of HostOutcome (host_outcome.h) shared by its two files:
// host_outcome_detail.cc builds a host's detail, host_outcome.cc says the
// rest. Private to src/report/. Pure functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/report/host_outcome.h"
#include "fleetreap/report/outcome_detail.h"

namespace fleetreap {
namespace host_outcome_internal {

/// Remote text made safe for one terminal line: control characters (escape
/// sequences included) '?', line breaks spaces, cut at "max" with "...".
std::string OneLine(const std::string& text, size_t max = 160);

/// The host's last GPU reading: after, or before when there is none after.
const std::vector<GpuReading>& FinalGpus(const HostReport& host);

/// How many of the host's holders met "fate".
int CountFate(const HostReport& host, HolderFate fate);

/// The outcome's kind into "*kind" and its detail, as words and values.
OutcomeDetail DetailOf(const HostReport& host, bool dry_run, OutcomeKind* kind);

/// "8 killed (TERM 6, KILL 2)"; empty when none was.
OutcomeDetail Killed(const HostReport& host);

/// The blocking readiness findings: the first one's words and " (+N more)".
OutcomeDetail Readiness(const HostReport& host);

/// NotReadySummary (host_outcome.h) as words and values.
OutcomeDetail NotReady(const HostReport& host);

}  // namespace host_outcome_internal
}  // namespace fleetreap
