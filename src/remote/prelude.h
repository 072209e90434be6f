// The shell prelude the remote scripts share (prelude.cc), and the
// end-less pieces the fused round trips are made of. Internal to
// the step files of src/remote/; pure functions. Durations are written with
// base/time_format.h.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/shm_clean.h"

namespace fleetreap {
namespace remote_script_internal {

/// The functions every script shares (z, add, pst, nvm, fds, dump, q) and
/// their settings for "paths".
std::string Prelude(const HostPaths& paths);

/// StopUnitsScript and ShmCleanScript without their "end" record: a step
/// that is not the last of a batch (batch.h).
std::string StopUnitsRecords(const std::vector<std::string>& units,
                             std::chrono::milliseconds timeout, const AuditRequest& audit);
std::string ShmCleanRecords(const std::vector<std::string>& patterns, bool dry_run,
                            const HostPaths& paths, const AuditRequest& audit,
                            const ShmSelection& selection = ShmSelection());

/// The audit functions a step that changes the host uses (needs z and
/// NL): "al FIELDS" adds the line "RUN'S FIELDS FIELDS" to the step's batch
/// (FIELDS already encoded), "aud" hands the batch to one logger and prints
/// "audit LINES RC" (nothing when the batch is empty). Without a run id
/// both do nothing.
std::string AuditPrelude(const AuditRequest& request);
/// "hb XX": sets c to the byte that od wrote as hex XX when AuditValue keeps
/// it, else to "%XX".
std::string AuditHexDecoder();

}  // namespace remote_script_internal
}  // namespace fleetreap
