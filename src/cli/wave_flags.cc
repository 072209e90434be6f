#include "fleetreap/cli/wave_flags.h"

#include <set>

#include "fleetreap/base/text.h"
#include "fleetreap/inventory/host_pattern.h"

namespace fleetreap {
namespace {

// The variables the selected hosts set, named in the refusal of a
// --wave-by that none sets: a few, sorted, then how many more.
std::string VariablesSet(const std::vector<FleetPlan>& plans) {
  constexpr size_t kShown = 8;
  std::set<std::string> names;
  for (const FleetPlan& plan : plans) {
    for (const auto& var : plan.host.vars) names.insert(var.first);
  }
  if (names.empty()) return "the hosts set no variable";
  std::vector<std::string> shown(names.begin(), names.end());
  const size_t more = shown.size() > kShown ? shown.size() - kShown : 0;
  shown.resize(shown.size() - more);
  return "hosts set: " + Join(shown, ", ") +
         (more > 0 ? ", and " + std::to_string(more) + " more" : "");
}

// --wave-by VAR against the selection: refused when no selected host sets
// VAR (a typo would make the whole fleet one wave); "warning" names the
// hosts that lack it when only some do.
Status CheckWaveBy(const std::string& by, const std::vector<FleetPlan>& plans,
                   std::string* warning) {
  std::vector<std::string> lacking;
  for (const FleetPlan& plan : plans) {
    if (plan.host.vars.count(by) == 0) lacking.push_back(plan.host.name);
  }
  if (lacking.empty()) return Status::Ok();
  if (lacking.size() == plans.size()) {
    return Status::Error(ErrorKind::kUsage,
                         "--wave-by " + by + ": no selected host sets it; " + VariablesSet(plans));
  }
  *warning = "--wave-by " + by + ": " + std::to_string(lacking.size()) + " of " +
             std::to_string(plans.size()) + " hosts do not set it (" + FoldHostNames(lacking) +
             "); they form one unit of their own, shown as (none)";
  return Status::Ok();
}

}  // namespace

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
    if (o.canary == 0 && o.waves.empty() && o.wave_by.empty()) {
      return "--max-fail " + o.max_fail +
             ": the cap is checked between waves, and without --canary, --waves or --wave-by "
             "the whole selection is one wave; add one (e.g. --canary 1)";
    }
  }
  if (o.local && WantsWaves(o)) return "--local runs on one machine: waves need --hosts";
  return "";
}

bool WantsWaves(const Options& o) {
  return o.canary > 0 || !o.waves.empty() || !o.wave_by.empty() || !o.max_fail.empty();
}

Status WavePlanFor(const Options& o, const std::vector<FleetPlan>& plans, std::vector<Wave>* waves,
                   FailCap* cap, std::string* warning) {
  warning->clear();
  std::vector<WaveSize> sizes;
  Status status = o.waves.empty() ? Status::Ok() : ParseWaveSizes("--waves", o.waves, &sizes);
  // By a variable without sizes: one unit (a rack) a wave.
  if (sizes.empty() && !o.wave_by.empty()) sizes.push_back(WaveSize{1, 0});
  *cap = FailCap();
  if (status.ok() && !o.max_fail.empty()) status = ParseFailCap(o.max_fail, cap);
  if (status.ok() && !o.wave_by.empty()) status = CheckWaveBy(o.wave_by, plans, warning);
  if (!status.ok()) return status;
  std::vector<std::string> unit_of;
  for (const FleetPlan& plan : plans) {
    auto it = o.wave_by.empty() ? plan.host.vars.end() : plan.host.vars.find(o.wave_by);
    unit_of.push_back(it == plan.host.vars.end() ? "" : it->second);
  }
  *waves = PlanWaves(WaveSizesFor(o.canary, sizes), o.wave_by, unit_of);
  return Status::Ok();
}

std::string DescribeWaves(const Options& o, const std::vector<FleetPlan>& plans,
                          const std::vector<Wave>& waves, const FailCap& cap) {
  std::vector<std::string> names;
  for (const FleetPlan& plan : plans) names.push_back(plan.host.name);
  return RenderWavePlan(waves, names, o.wave_by, cap);
}

}  // namespace fleetreap
