#include "fleetreap/runner/sweep.h"

#include <gtest/gtest.h>

#include "support/fake_clock.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(SweepTest, RoundsStartAnIntervalApart) {
  FakeClock clock;
  std::vector<long long> starts;
  SweepSettings settings;
  settings.interval = milliseconds(1000);
  settings.rounds = 3;
  const int rounds = RunSweep(
      settings,
      [&](int) {
        starts.push_back(
            std::chrono::duration_cast<milliseconds>(clock.Now().time_since_epoch()).count());
        clock.Advance(milliseconds(300));  // the round's own time
      },
      nullptr, clock);
  EXPECT_EQ(rounds, 3);
  EXPECT_EQ(starts, (std::vector<long long>{0, 1000, 2000}));
}

TEST(SweepTest, ALongRoundStartsTheNextAtOnce) {
  FakeClock clock;
  SweepSettings settings;
  settings.interval = milliseconds(1000);
  settings.rounds = 2;
  RunSweep(
      settings, [&](int) { clock.Advance(milliseconds(2500)); }, nullptr, clock);
  EXPECT_EQ(clock.slept().count(), 0);
}

TEST(SweepTest, StopEndsTheWaitAndNoNewRoundStarts) {
  FakeClock clock;
  std::atomic<bool> stop{false};
  SweepSettings settings;
  settings.interval = milliseconds(600000);
  int seen = 0;
  const int rounds = RunSweep(
      settings,
      [&](int round) {
        seen = round;
        if (round == 2) stop = true;  // SIGTERM during the second round
      },
      &stop, clock);
  EXPECT_EQ(rounds, 2);
  EXPECT_EQ(seen, 2);
  EXPECT_EQ(clock.slept().count(), 600000);  // one full wait, none after the stop
}

TEST(SweepTest, PlansBecomeInspectOnly) {
  std::vector<FleetPlan> plans(2);
  auto term_only = std::make_shared<Playbook>();
  term_only->steps = {Step::kInspect, Step::kTerm, Step::kKill};
  plans[0].playbook = term_only;
  auto custom = std::make_shared<Playbook>();
  custom->name = "vllm";
  custom->steps = {Step::kInspect, Step::kStopUnits, Step::kTerm, Step::kKill, Step::kCleanShm};
  custom->threshold_mib = 512;
  plans[1].playbook = custom;
  MakeInspectOnly(&plans);
  for (const FleetPlan& plan : plans) EXPECT_EQ(plan.playbook->name, "inspect");
  // The /dev/shm step stays where it was: a dry run only lists.
  EXPECT_EQ(plans[0].playbook->steps, std::vector<Step>{Step::kInspect});
  EXPECT_EQ(plans[1].playbook->steps, (std::vector<Step>{Step::kInspect, Step::kCleanShm}));
  EXPECT_EQ(plans[1].playbook->threshold_mib, 512);
  EXPECT_EQ(custom->steps.size(), 5u);  // the original is left alone
}

}  // namespace
}  // namespace fleetreap
