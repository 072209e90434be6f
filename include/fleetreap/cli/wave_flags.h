// WaveFlags: --canary, --waves, --wave-by and --max-fail, checked when the
// command line is parsed and turned into the runner's wave plan once the
// selection is known. Pure; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/cli/options.h"
#include "fleetreap/runner/fleet_plan.h"
#include "fleetreap/runner/wave_plan.h"

namespace fleetreap {

/// "" when the wave flags are well formed, else the usage error's one line
/// (`--waves: "0" is not a wave size ...`, `--canary: must be 1 or more`).
/// --max-fail without --canary, --waves or --wave-by is refused: the cap is
/// checked between waves, and alone it would make one wave of every host.
std::string CheckWaveFlags(const Options& o);

/// True when any wave flag was given.
bool WantsWaves(const Options& o);

/// The waves of "plans" (in order) and the cap. --wave-by reads each host's
/// variable ("" when it has none): a kUsage error when no host of "plans"
/// sets it, and "warning" (else "") names the hosts that lack it when some
/// do. kUsage too for flags CheckWaveFlags would refuse.
[[nodiscard]] Status WavePlanFor(const Options& o, const std::vector<FleetPlan>& plans,
                                 std::vector<Wave>* waves, FailCap* cap, std::string* warning);

/// RenderWavePlan for "waves" of "plans".
std::string DescribeWaves(const Options& o, const std::vector<FleetPlan>& plans,
                          const std::vector<Wave>& waves, const FailCap& cap);

}  // namespace fleetreap
