// WaveRunner: a run in stages. It hands each wave of a WavePlan to RunFleet
// in turn and, between waves, asks StopReason whether the next may start;
// the hosts of the waves that never start are reported not_started with
// the reason (RunReport::stopped). The observer sees one run: RunStarted
// with every selected host, RunFinished once. Blocks until the run is
// over; the threads and the rules for "observer", "stop_requested" and
// "clock" are RunFleet's (fleet_runner.h).
#pragma once

#include <atomic>
#include <vector>

#include "fleetreap/runner/fleet_runner.h"
#include "fleetreap/runner/wave_plan.h"

namespace fleetreap {

/// Runs "waves" (PlanWaves over "plans") one after the other. The report
/// has the hosts in input order, as RunFleet's, and not_started in input
/// order: those of waves a stop (Ctrl-C, --deadline, the cap) left out.
/// --deadline bounds the whole run, across waves. A dry run never stops
/// for the cap (it changes nothing). One wave behaves as RunFleet.
RunReport RunWaves(const std::vector<FleetPlan>& plans, const std::vector<Wave>& waves,
                   const FailCap& cap, const FleetSettings& settings,
                   const TransportFactory& make_transport, FleetObserver* observer,
                   const std::atomic<bool>* stop_requested, Clock& clock,
                   const HostCleanerFunction& clean = CleanHost);

}  // namespace fleetreap
