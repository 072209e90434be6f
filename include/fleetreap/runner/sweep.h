// Sweep: `fleetreap sweep`, report-only inspections repeated on a timer,
// for the leaks that happen between rollouts (memory held with no owner,
// stale /dev/shm, GPUs not ready). It never signals: every plan is made
// inspect-only (MakeInspectOnly) and the run is a dry run, so the
// escalation reads the host and changes nothing whatever a playbook asks. The loop reads
// time only from the Clock it is given. Thread-compatible.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <vector>

#include "fleetreap/base/clock.h"
#include "fleetreap/runner/fleet_plan.h"

namespace fleetreap {

struct SweepSettings {
  std::chrono::milliseconds interval{600000};  // from one round's start to the next
  int rounds = 0;                              // 0: until stopped
};

/// Replaces every plan's playbook by a copy that keeps only the steps that
/// read: inspect, and clean_shm when the playbook has it (in a dry run, the
/// only kind a sweep makes, it lists the /dev/shm leftovers and removes
/// nothing). Thresholds, patterns and protections are kept; the name is
/// "inspect". No unit stop, signal or GPU reset can follow from it.
void MakeInspectOnly(std::vector<FleetPlan>* plans);

/// Calls "round" with 1, 2, ... : the first at once, each next one
/// "interval" after the previous one started (at once when a round ran
/// longer), until "rounds" were run or "*stop_requested" (may be null) is
/// set; the wait between rounds is slept in slices of at most 100 ms so a
/// SIGTERM ends it promptly. A round already going is never cut: "round"
/// sees the stop flag itself. Returns the rounds run.
int RunSweep(const SweepSettings& settings, const std::function<void(int round)>& round,
             const std::atomic<bool>* stop_requested, Clock& clock);

}  // namespace fleetreap
