#include "fleetreap/cli/wave_flags.h"

namespace fleetreap {

std::string CheckWaveFlags(const Options& o) {
  if (o.canary < 0) return "--canary: must be 1 or more, got " + std::to_string(o.canary);
  std::vector<WaveSize> sizes;
  if (!o.waves.empty()) {
    Status status = ParseWaveSizes("--waves", o.waves, &sizes);
    if (!status.ok()) return status.message();
  }
  if (!o.max_fail.empty()) {
    FailCap cap;
    Status status = ParseFailCap(o.max_fail, &cap);
    if (!status.ok()) return status.message();
  }
  if (o.local && WantsWaves(o)) return "--local runs on one machine: waves need --hosts";
  return "";
}

bool WantsWaves(const Options& o) {
  return o.canary > 0 || !o.waves.empty() || !o.wave_by.empty() || !o.max_fail.empty();
}

void WavePlanFor(const Options& o, const std::vector<FleetPlan>& plans, std::vector<Wave>* waves,
                 FailCap* cap) {
  std::vector<WaveSize> sizes;
  if (!o.waves.empty()) (void)ParseWaveSizes("--waves", o.waves, &sizes);
  // By a variable without sizes: one unit (a rack) a wave.
  if (sizes.empty() && !o.wave_by.empty()) sizes.push_back(WaveSize{1, 0});
  *cap = FailCap();
  if (!o.max_fail.empty()) (void)ParseFailCap(o.max_fail, cap);
  std::vector<std::string> unit_of;
  for (const FleetPlan& plan : plans) {
    auto it = o.wave_by.empty() ? plan.host.vars.end() : plan.host.vars.find(o.wave_by);
    unit_of.push_back(it == plan.host.vars.end() ? "" : it->second);
  }
  *waves = PlanWaves(WaveSizesFor(o.canary, sizes), o.wave_by, unit_of);
}

std::string DescribeWaves(const Options& o, const std::vector<FleetPlan>& plans,
                          const std::vector<Wave>& waves, const FailCap& cap) {
  std::vector<std::string> names;
  for (const FleetPlan& plan : plans) names.push_back(plan.host.name);
  return RenderWavePlan(waves, names, o.wave_by, cap);
}

}  // namespace fleetreap
