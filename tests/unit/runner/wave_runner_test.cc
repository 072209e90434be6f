#include "fleetreap/runner/wave_runner.h"

#include <gtest/gtest.h>

#include <set>

#include "fleetreap/base/exit_code.h"
#include "support/fake_clock.h"

namespace fleetreap {
namespace {

class NullTransport : public Transport {
 public:
  Status Connect(std::chrono::steady_clock::time_point) override { return Status::Ok(); }
  CommandResult Run(const std::string&, std::chrono::milliseconds) override { return {}; }
  void Close() override {}
  std::string Describe() const override { return "null"; }
};

std::vector<FleetPlan> Plans(int count) {
  std::vector<FleetPlan> plans;
  for (int i = 0; i < count; ++i) {
    FleetPlan plan;
    plan.host.name = "gpu" + std::to_string(i);
    plans.push_back(plan);
  }
  return plans;
}

// Hosts in "dirty" come back dirty, the others clean.
HostCleanerFunction Cleaner(std::set<std::string> dirty) {
  return [dirty](Transport&, const HostJob& job) {
    HostReport report;
    report.status = dirty.count(job.host->name) ? HostStatus::kDirty : HostStatus::kClean;
    return report;
  };
}

struct Counting : FleetObserver {
  void RunStarted(int total) override {
    ++started_runs;
    this->total = total;
  }
  void HostFinished(const HostReport&) override { ++finished; }
  void RunFinished() override { ++finished_runs; }
  int started_runs = 0, finished_runs = 0, total = 0, finished = 0;
};

RunReport RunStaged(int hosts, const std::string& sizes, const std::string& cap_text,
                    std::set<std::string> dirty, Counting* observer = nullptr,
                    bool dry_run = false) {
  std::vector<WaveSize> parsed;
  EXPECT_TRUE(ParseWaveSizes("--waves", sizes, &parsed).ok());
  FailCap cap;
  if (!cap_text.empty()) {
    EXPECT_TRUE(ParseFailCap(cap_text, &cap).ok());
  }
  const std::vector<FleetPlan> plans = Plans(hosts);
  const std::vector<Wave> waves = PlanWaves(parsed, "", std::vector<std::string>(plans.size()));
  FleetSettings settings;
  settings.dry_run = dry_run;
  FakeClock clock;
  return RunWaves(
      plans, waves, cap, settings, [](const Host&) { return std::make_unique<NullTransport>(); },
      observer, nullptr, clock, Cleaner(std::move(dirty)));
}

TEST(WaveRunnerTest, RunsEveryWaveWhenNothingFails) {
  Counting observer;
  RunReport report = RunStaged(20, "1,10%,100%", "1", {}, &observer);
  EXPECT_EQ(report.hosts.size(), 20u);
  EXPECT_TRUE(report.not_started.empty());
  EXPECT_EQ(report.stopped, "");
  EXPECT_EQ(observer.started_runs, 1);
  EXPECT_EQ(observer.finished_runs, 1);
  EXPECT_EQ(observer.total, 20);
  EXPECT_EQ(observer.finished, 20);
  EXPECT_EQ(ExitCodeFor(report), kExitClean);
}

TEST(WaveRunnerTest, CapStopsBeforeTheNextWave) {
  // Waves 1 | 2 | 17: two failures in wave 2 pass a cap of 1.
  RunReport report = RunStaged(20, "1,10%,100%", "1", {"gpu1", "gpu2"});
  ASSERT_EQ(report.hosts.size(), 3u);
  EXPECT_EQ(report.hosts[2].name, "gpu2");
  ASSERT_EQ(report.not_started.size(), 17u);
  EXPECT_EQ(report.not_started.front(), "gpu3");
  EXPECT_EQ(report.stopped, "stopped by --max-fail 1: 2 hosts failed after wave 2 of 3");
  EXPECT_FALSE(report.interrupted);
  EXPECT_EQ(ExitCodeFor(report), kExitDirty | kExitUnreachable | kExitStopped);
  const std::vector<HostWithoutResult> without = HostsWithoutResult(report);
  EXPECT_EQ(without.front().why, report.stopped);
}

TEST(WaveRunnerTest, AWaveThatAllFailsStopsWithoutACap) {
  RunReport report = RunStaged(4, "1", "", {"gpu0"});
  EXPECT_EQ(report.hosts.size(), 1u);
  EXPECT_EQ(report.stopped, "stopped: every host of wave 1 of 4 failed");
  report = RunStaged(4, "2", "", {"gpu0"});
  EXPECT_EQ(report.hosts.size(), 4u);
  EXPECT_EQ(report.stopped, "");
}

TEST(WaveRunnerTest, FailuresInTheLastWaveStopNothing) {
  RunReport report = RunStaged(3, "1,2", "0", {"gpu2"});
  EXPECT_EQ(report.hosts.size(), 3u);
  EXPECT_EQ(report.stopped, "");
  EXPECT_EQ(ExitCodeFor(report), kExitDirty);
}

TEST(WaveRunnerTest, ADryRunNeverStops) {
  RunReport report = RunStaged(4, "1", "0", {"gpu0", "gpu1"}, nullptr, /*dry_run=*/true);
  EXPECT_EQ(report.hosts.size(), 4u);
  EXPECT_EQ(report.stopped, "");
}

}  // namespace
}  // namespace fleetreap
