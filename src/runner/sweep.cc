#include "fleetreap/runner/sweep.h"

#include <algorithm>
#include <memory>

namespace fleetreap {
namespace {

constexpr std::chrono::milliseconds kSleepSlice{100};

bool Stopped(const std::atomic<bool>* stop_requested) {
  return stop_requested != nullptr && stop_requested->load();
}

}  // namespace

void MakeInspectOnly(std::vector<FleetPlan>* plans) {
  for (FleetPlan& plan : *plans) {
    auto inspect = std::make_shared<Playbook>(*plan.playbook);
    inspect->name = "inspect";
    inspect->steps = {Step::kInspect};
    if (plan.playbook->Runs(Step::kCleanShm)) inspect->steps.push_back(Step::kCleanShm);
    plan.playbook = std::move(inspect);
  }
}

int RunSweep(const SweepSettings& settings, const std::function<void(int round)>& round,
             const std::atomic<bool>* stop_requested, Clock& clock) {
  int done = 0;
  while (!Stopped(stop_requested) && (settings.rounds == 0 || done < settings.rounds)) {
    const auto started = clock.Now();
    round(++done);
    if (settings.rounds != 0 && done >= settings.rounds) break;
    const auto next = started + settings.interval;
    while (!Stopped(stop_requested)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(next - clock.Now());
      if (left.count() <= 0) break;
      clock.SleepFor(std::min(left, kSleepSlice));
    }
  }
  return done;
}

}  // namespace fleetreap
