// Batch: the steps that share one round trip, in order, as one script and
// one reply. A StepRequest says what one step does (a scan, a per-GPU
// query, a signal wave, unit stops, a /dev/shm clean or listing, GPU
// resets); BatchScript defines the shell library the steps share once, at
// its start (each piece any of them needs), then joins the steps' own
// parts, each of which sets what its body reads as it does alone, each
// step but the last without its "end" record where it has one of its own
// to drop (the stops' and the /dev/shm step's), so the reply ends with one
// "end" and reads as the steps' replies alone would, joined; ParseBatch
// walks the reply with each step's record grammar, in the same order, into
// one StepReply per request. Which steps ride together is the escalation's
// choice (Action::fused); this file only carries them. Pure functions;
// thread-safe.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/model/gpu_reading.h"
#include "fleetreap/model/host_reply.h"
#include "fleetreap/model/target.h"
#include "fleetreap/remote/audit.h"
#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/host_paths.h"
#include "fleetreap/remote/scan_script.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/stop_units.h"

namespace fleetreap {

/// One signal wave, as SignalScript takes it.
struct SignalRequest {
  std::string signal = "TERM";  // "TERM" or "KILL"
  std::vector<Target> targets;
  std::chrono::milliseconds wait{0};
  std::chrono::milliseconds poll{100};
  std::vector<int> parents;  // the targets' parents, watched
  AuditRequest audit = {};   // the run and each target's fields, for the audit lines
  uint64_t scan_start = 0;   // ScanOutput::clock of the scan that found the targets; 0 none
};

/// SignalScript for "wave".
std::string SignalScriptFor(const SignalRequest& wave, const HostPaths& paths = HostPaths());

/// PerGpuQueryScript: each GPU of "indexes" asked alone, each call bounded by "timeout".
struct GpuQueryRequest {
  std::vector<int> indexes;
  std::chrono::milliseconds timeout{20000};
};

/// StopUnitsScript: one stop per unit, in order.
struct StopUnitsRequest {
  std::vector<std::string> units;
  std::chrono::milliseconds unit_timeout{30000};
  AuditRequest audit = {};  // the run's fields (a wave's targets are not read)
};

/// ShmCleanScript: the clean, or with "dry_run" its listing.
struct ShmRequest {
  std::vector<std::string> patterns;
  bool dry_run = false;
  AuditRequest audit = {};
  ShmSelection selection = {};
};

/// GpuResetScript: one reset per GPU, "units" stopped before and started after.
struct ResetRequest {
  std::vector<int> gpus;
  std::chrono::milliseconds per_gpu{30000};
  std::vector<std::string> units;
  std::chrono::milliseconds unit_timeout{30000};
  AuditRequest audit = {};
  std::chrono::milliseconds query_timeout{30000};
};

using StepRequest = std::variant<ScanRequest, GpuQueryRequest, SignalRequest, StopUnitsRequest,
                                 ShmRequest, ResetRequest>;

/// The stops' reply: one per unit, in order, and whether their audit lines were written.
struct UnitStops {
  std::vector<UnitStop> stops;
  AuditOutcome audit;
};

/// One step's reply, the alternative of its request's: a HostSnapshot for a
/// scan, the readings that answered for a per-GPU query, a SignalReply,
/// UnitStops, a ShmOutput, a GpuResetReply.
using StepReply = std::variant<HostSnapshot, std::vector<GpuReading>, SignalReply, UnitStops,
                               ShmOutput, GpuResetReply>;

/// The script of "batch", in order: the library once, then each step's own
/// part (a batch of one is that step's script). A dry run's /dev/shm listing lends its
/// fd pass to a holder scan right after it ("RW=1"). A per-GPU query and a
/// reset run alone.
std::string BatchScript(const std::vector<StepRequest>& batch,
                        const HostPaths& paths = HostPaths());

/// The batch as logs name its command: each step's name joined by ", "
/// ("stop units, signal", "scan, /dev/shm clean, scan").
std::string BatchName(const std::vector<StepRequest>& batch);

/// Parses BatchScript(batch)'s stdout into one reply per request, in order.
/// The steps after a signal wave run only when the wave left no target of a
/// TERM and no parent alive (the script's WL): a reply that ends with the
/// wave's records gives replies for the steps up to the wave only.
/// A reply that breaks the steps' grammar is kParse naming the batch ("stop
/// units and signal output record 2: ...") and leaves "replies" empty; a scan
/// whose records cannot be read (ReadScan) returns its error with "replies"
/// filled: every step but the scans read, and the scans before it.
[[nodiscard]] Status ParseBatch(const std::string& out, const std::vector<StepRequest>& batch,
                                std::vector<StepReply>* replies);

}  // namespace fleetreap
