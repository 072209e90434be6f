// HostStatus: the verdict on one reached or unreached host, as every report
// states it. The escalation's judge (escalation/verdict.h) decides it for a
// reached host; the transport's failures make the others. Plain values.
#pragma once

namespace fleetreap {

/// kNotReady: empty (as clean as kClean) but a blocking readiness finding
/// holds (escalation/readiness.h): not dirty, and not ready for the job.
enum class HostStatus { kClean, kDirty, kUnreachable, kFailed, kNotReady };
const char* HostStatusName(HostStatus status);  // "clean", ..., "not_ready"

}  // namespace fleetreap
