// DrainReason: why a host is not clean, in one line a scheduler can keep as
// a node's drain reason ("fleetreap: GPU 5 held by pid 4242
// (VLLM::Worker_TP5)"). The Slurm epilog prints it when it fails, so that
// the drained node says what holds it; --drain-reasons writes one per host.
// Every reason starts with "fleetreap:", so that fleetreap's own drains can
// be told from other owners' (as LBNL NHC does with "NHC:"). Pure functions
// of report data; thread-compatible.
#pragma once

#include <string>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// Reasons start with this.
inline constexpr char kDrainReasonPrefix[] = "fleetreap:";

/// The reason "host" is not clean, without '\n', or "" when its status is
/// clean. The first GPU that is not clean names it: a busy GPU by the
/// holder still on it (the one nvidia-smi charges there, else one holding
/// its device file; fleetreap's targets before protected daemons):
///   fleetreap: GPU 5 held by pid 4242 (VLLM::Worker_TP5)
///   fleetreap: GPU 7 held by pid 5007 (python3), unkillable in state D
///   fleetreap: GPU 3 ghost memory (2048 MiB, no process holds it)
///   fleetreap: GPU 0000:B1:00.0 lost: Unknown Error
/// and " (+2 more GPUs not clean)" when others are not clean either. Without
/// a GPU to name: a holder left alive, the nvidia-smi failure, the error of
/// an unreachable or failed host ("fleetreap: unreachable: connect_timeout:
/// Timeout connecting to 10.0.0.5"), else the host's outcome. A host's text
/// (names, messages) comes with control bytes replaced and capped, so the
/// line stays one line of at most about 300 bytes.
std::string DrainReason(const HostReport& host);

/// One line per host of "report" that is not clean (its status; in a dry
/// run too, so that a check can refuse a node that is not clean now), in
/// report order: "HOST REASON\n"; then "HOST fleetreap: not started\n" for
/// hosts never started. "" when every host is clean. For
/// `while read -r host reason; do scontrol update NodeName="$host"
/// State=DRAIN Reason="$reason"; done`.
std::string RenderDrainReasons(const RunReport& report);

}  // namespace fleetreap
