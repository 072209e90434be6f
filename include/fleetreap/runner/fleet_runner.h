// FleetRunner: the bounded parallel fan-out. It takes every selected host
// with its playbook, runs at most "forks" hosts at once, each on a worker
// (min(forks, hosts) of them), and on each one connects (retrying transient failures with backoff
// before anything was done there), runs the escalation, and closes. A slow or dead host occupies
// one slot, never the run; a host that fails never stops the others. It never prints: progress goes
// to a FleetObserver, results into the RunReport. RunFleet itself may be called from any thread; it
// blocks until the run is over, and that thread alone collects what the workers report and calls
// the observer.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/base/clock.h"
#include "fleetreap/inventory/host.h"
#include "fleetreap/model/scope.h"
#include "fleetreap/report/report.h"
#include "fleetreap/runner/fleet_observer.h"
#include "fleetreap/runner/fleet_plan.h"
#include "fleetreap/runner/host_cleaner.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

/// What carries the workers. kFibers: each worker is a fiber (base/fiber.h)
/// and min(cores, 8, workers) loop threads run them all; SSH sessions wait
/// as fibers, so hosts in flight cost no thread each (docs/scale.md).
/// kThreads: one thread per worker, each blocking on its host.
enum class Fanout { kFibers, kThreads };

struct FleetSettings {
  int forks = 64;  // hosts in flight at once (>= 1)
  Fanout fanout = Fanout::kFibers;
  std::chrono::milliseconds command_timeout{60000};
  std::chrono::milliseconds host_timeout{0};      // whole escalation on a host; 0: none
  std::chrono::milliseconds deadline{0};          // whole run; 0: none
  int retries = 2;                                // extra connect attempts, transient kinds
  std::chrono::milliseconds retry_backoff{1000};  // first wait; doubles each retry
  bool dry_run = false;
  std::vector<std::string> extra_protect;  // --protect
  Scope scope;                             // --gpus, --cgroup, Slurm
  AuditRequest audit;                      // HostJob::audit of every host
  /// false: once the observer has had a finished host's report, the run
  /// keeps of it only its name, status and error kind (report.hosts holds
  /// those outlines), so that memory holds the hosts in flight, not every
  /// report: for an observer that makes the reports as hosts end
  /// (report_stream.h). Kept whole without an observer.
  bool keep_host_reports = true;
};

/// Makes the (not yet connected) transport for one host. Called on a worker
/// thread; must be thread-safe. A null result fails the host (internal).
using TransportFactory = std::function<std::unique_ptr<Transport>(const Host&)>;

/// Runs the escalation on a connected transport: CleanHost, or a fake in tests.
using HostCleanerFunction = std::function<HostReport(Transport&, const HostJob&)>;

/// Runs every plan and returns the report with the hosts in input order,
/// its dry run, scope and times set; the run's metadata (tool version,
/// playbook name, host key policy) is the caller's to add.
///
/// Per host: Connect, retried up to settings.retries times with doubling
/// backoff while the error IsTransient (refused, connect/banner timeout,
/// connection lost) and the host's deadline allows; then "clean" (CleanHost
/// by default) with a HostJob whose deadline is the earlier of --host-timeout
/// and --deadline; then Close. A host that cannot be connected is reported
/// kUnreachable (or kFailed for a non-network kind) with its ErrorKind and
/// message. Name, address, port, attempts, a leading "connect" StepTiming and
/// the total duration are always filled, and the transport's
/// HostKeyFingerprint() whenever it has one.
///
/// Stopping: once "*stop_requested" is true (Ctrl-C) or the run deadline has
/// passed, no new host is started; hosts already in flight finish (their own
/// deadlines bound them), and a connect retry's backoff ends early. Hosts
/// never started are left out of report.hosts and listed by name in
/// report.not_started; report.interrupted is set when the stop came from
/// "stop_requested". "observer" (may be null), "stop_requested" (may be null)
/// and "clock" must outlive the call.
///
/// Threads: the workers (settings.fanout says on what they run; a fiber
/// stays on its loop thread, so a host's transport is used from one thread)
/// only push events (host started, retrying, a step
/// begun, finished) to a queue; the calling thread drains it and makes every observer call,
/// calls observer->Tick() about every 250 ms and checks "*stop_requested"
/// (observer->Interrupted() once it is set). "clock" gives every time the
/// run reads (deadlines, durations, backoff waits) and is shared by the
/// workers and passed to each HostJob: it must be thread-safe.
///
/// Limits: --host-timeout and --deadline bound the escalation (through the
/// job's deadline) and stop further connect retries, but one connect attempt
/// in progress runs to its own connect timeout. Each host in flight holds a
/// socket: the caller raises RLIMIT_NOFILE to fit "forks" if it needs to.
/// Workers block SIGINT, SIGTERM, SIGHUP and SIGPIPE: the caller's thread
/// takes those signals (install the Ctrl-C handler there).
RunReport RunFleet(const std::vector<FleetPlan>& plans, const FleetSettings& settings,
                   const TransportFactory& make_transport, FleetObserver* observer,
                   const std::atomic<bool>* stop_requested, Clock& clock,
                   const HostCleanerFunction& clean = CleanHost);

}  // namespace fleetreap
