// HostFold: the pure folds of a host's replies into its HostView. remote
// reads a reply's bytes into model values (a HostSnapshot, a SignalReply);
// these functions fold them in and say what the scan calls for next (a query
// of each GPU alone, a re-scan with nvidia-smi's table, the end of the
// ladder). The runner only carries the bytes and performs what they say. No
// I/O, no clock; thread-safe.
//
// A new piece of scan evidence: a field of HostSnapshot (model/host_reply.h),
// filled by remote/scan.cc, read by FoldSnapshot here.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/escalation/escalation.h"
#include "fleetreap/escalation/host_view.h"
#include "fleetreap/escalation/protect.h"
#include "fleetreap/escalation/readiness.h"
#include "fleetreap/escalation/scope.h"
#include "fleetreap/model/host_reply.h"

namespace fleetreap {

/// What a fold needs to know about the run, besides the view.
struct FoldContext {
  bool inspected = false;  // History::inspected: the inspect was read already
  int waves = 0;           // History::waves
  int expected_gpus = 0;   // the inventory's count, 0 unknown
  int64_t threshold_mib = 0;
  std::map<std::string, int64_t> allowances;            // Playbook::daemon_allowance_mib
  std::chrono::milliseconds nvidia_smi_timeout{20000};  // for the timeout's message
  bool table_scan = false;  // this scan asked for the plain table already
  ReadyPolicy ready;        // Playbook::ready: the readiness checks
};

/// What the folds carry from one scan to the next besides the view.
struct FoldState {
  ProtectList protect;  // the session and daemon pid files are updated per scan
  /// The job's scope, its GPUs turned from device minors into indexes by the
  /// first full scan (Scope::gpus_are_minors: SLURM_JOB_GPUS).
  Scope scope;
  int device_gpus = 0;           // 1 + the highest /dev/nvidiaN seen in any scan
  int driver_gpus = 0;           // GPUs in the driver's own list (/proc/driver/nvidia/gpus)
  std::string nvidia_smi_error;  // nvidia-smi's latest words, "" none
};

/// What folding one scan found, and what it calls for.
struct ScanFold {
  /// OK, or why the host fails (the view is then left as it was): another
  /// PID namespace, nvidia-smi timed out or answered unreadably, an unknown
  /// SLURM_JOB_GPUS minor.
  Status status;
  /// Nothing may be signalled or removed: no driver or a GPU off the bus at
  /// inspect, or another PID namespace. Travels in StepResult.
  bool stops_ladder = false;
  bool nvidia_smi_failed = false;  // the query failed outright (not on a lost GPU)
  /// Memory with no holder after a holder scan without the table: look
  /// again with it, which also lists graphics clients, before calling it a ghost.
  bool table_rescan = false;
  std::vector<std::string> units_skipped;  // at inspect: "UNIT: reason"
};

/// The GPU indexes to query one by one before folding "snapshot": after a
/// whole-host query failed on a lost GPU and printed no other row, each
/// index below the inventory's count (else below the device files seen);
/// empty otherwise.
std::vector<int> GpusToQueryOneByOne(const HostSnapshot& snapshot, const FoldContext& context,
                                     const FoldState& state);

/// Folds one scan into "view": the holders (minors mapped to indexes, the
/// processes nvidia-smi charges added, merged with MergeHolderScan), the
/// units safe to stop (at inspect), the respawn watch, and the GPUs
/// classified under the scope, ghosts told from memory a process uses, and
/// (when the scan read them) the readiness findings under "context.ready"
/// from the health readings and the classified GPUs.
ScanFold FoldSnapshot(const HostSnapshot& snapshot, const FoldContext& context, FoldState* state,
                      HostView* view);

/// What a signal wave did, for the report.
struct SignalFold {
  int sent = 0;                      // signals sent
  std::vector<std::string> refused;  // "PID (user)" kill(1) refused
};

/// Folds the reply to "wave" (kTerm or kKill) into "view": each target's
/// flags and first signal time, its fate (kUnkillable when a KILL left it,
/// FateAfterExit when gone), a refusal marking it signalled for good; and a
/// target's parent that died makes it reparented (ppid 1: nothing can
/// restart it, nothing is watched). A target that only nvidia-smi named and
/// that the host says is gone is never a target again (unheld), unless it
/// was born at or after "scan_start" (the start of the scan that found it,
/// host clock ticks; 0 unknown): the signal step drops such a target
/// whatever it holds (a process that started while the scan ran, such as a
/// restarted worker still opening its devices), and the next scan judges it.
SignalFold FoldSignal(const Action& wave, const SignalReply& reply, HostView* view,
                      uint64_t scan_start = 0);

/// The targets' parents that the signal script is asked to watch: the PPIDs
/// above 1 of the tracked holders "wave" targets, ascending.
std::vector<int> SignalParents(const Action& wave, const HostView& view);

/// Adds what nvidia-smi charges to "holders": each app's GPU (matched to
/// "gpus" by UUID, else bus id) to its holder's gpus and charged_gpus, and a
/// holder for each app PID no holder is, from "described", else one
/// protected as "not in this host's /proc" (start_time 0, never signalled).
/// Keeps "holders" sorted by PID.
void ChargeComputeApps(const std::vector<ComputeApp>& apps, const std::map<int, Holder>& described,
                       const std::vector<GpuReading>& gpus, std::vector<Holder>* holders);

}  // namespace fleetreap
