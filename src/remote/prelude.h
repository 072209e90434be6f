// The shell library the remote scripts share (prelude.cc), a step's script
// as the library pieces it needs and its own part, and the end-less steps
// the fused round trips are made of. A round trip (batch.h) defines each
// piece once, at its start, and then runs each step's own part. Internal to
// the step files of src/remote/; pure functions. Durations are written
// with base/time_format.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "fleetreap/model/target.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"

namespace fleetreap {
namespace remote_script_internal {

/// The pieces of the shared library: shell functions, and constants that no
/// step assigns (the C locale, NL, the perl programs, PL), so one
/// definition serves every step of a round trip. The order is the order
/// of definition.
enum class LibraryPiece {
  kPrelude,          // LC_ALL, NL; z, add, pst, nvm, lv, fds, mps, cap, dump, q
  kPerlWalk,         // PLW, PLD, PL; pwk, pdt (perl_walk.h)
  kShmHolders,       // sdx, hx, shmh (shm_holders.h)
  kAuditHexDecoder,  // hb (AuditHexDecoder)
};

/// The text of "pieces", each once, in LibraryPiece's order.
std::string LibraryText(const std::set<LibraryPiece>& pieces);

/// A step's script: the library pieces its own part calls, and its own
/// part, which sets or resets every variable its body reads (the prelude's
/// settings, its audit functions' AP, its inputs) before the body: a step
/// behaves the same alone and after other steps.
struct StepScript {
  std::set<LibraryPiece> library;
  std::string own;
};

/// The step alone: its library pieces, then its own part.
std::string Whole(const StepScript& step);

/// What the prelude's functions read, set for each step: IFS (blank, tab,
/// newline), DV (paths.dev_dir), and SD, CI, UI and Q empty.
std::string PreludeSettings(const HostPaths& paths);

/// The scan's and the signal's scripts (ScanScript, SignalScript) as parts.
StepScript ScanParts(const ScanRequest& request, const HostPaths& paths);
StepScript SignalParts(const std::string& signal, const std::vector<Target>& targets,
                       std::chrono::milliseconds wait, std::chrono::milliseconds poll,
                       const HostPaths& paths, const std::vector<int>& parents,
                       const AuditRequest& audit, uint64_t scan_start);

/// StopUnitsScript and ShmCleanScript as parts, without their "end" record:
/// a step that is not the last of a batch (batch.h).
StepScript StopUnitsRecords(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout, const AuditRequest& audit);
StepScript ShmCleanRecords(const std::vector<std::string>& patterns, bool dry_run,
                           const HostPaths& paths, const AuditRequest& audit,
                           const ShmSelection& selection = ShmSelection());

/// The audit functions a step that changes the host uses (needs z and
/// NL), part of the step's own part (they set AP, which the request
/// decides): "al FIELDS" adds the line "RUN'S FIELDS FIELDS" to the step's batch
/// (FIELDS already encoded), "aud" hands the batch to one logger and prints
/// "audit LINES RC" (nothing when the batch is empty). Without a run id
/// both do nothing.
std::string AuditPrelude(const AuditRequest& request);
/// "hb XX": sets c to the byte that od wrote as hex XX when AuditValue keeps
/// it, else to "%XX".
std::string AuditHexDecoder();

}  // namespace remote_script_internal
}  // namespace fleetreap
