// RunFleet and its observer: every call comes from the calling thread, and
// a run that keeps no reports drops each once the observer had it.
#include <gtest/gtest.h>

#include <mutex>
#include <set>
#include <thread>

#include "fleetreap/runner/fleet_runner.h"
#include "support/fake_clock.h"
#include "support/fleet_runner_fakes.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(FleetRunnerTest, ObserverCallsComeFromTheCallingThread) {
  FakeClock clock;
  FleetSettings settings = FastSettings();
  settings.forks = 8;
  settings.retries = 1;
  struct ThreadCheck : FleetObserver {
    std::thread::id caller = std::this_thread::get_id();
    int elsewhere = 0;
    int calls = 0;
    void Note() {
      ++calls;
      if (std::this_thread::get_id() != caller) ++elsewhere;
    }
    void RunStarted(int) override { Note(); }
    void HostStarted(const Host&) override { Note(); }
    void HostRetrying(const Host&, int, const std::string&) override { Note(); }
    void HostFinished(const HostReport&) override { Note(); }
    void RunFinished() override { Note(); }
  } observer;
  RunFleet(
      Plans(40), settings,
      [](const Host&) {
        return std::make_unique<ScriptedTransport>(
            std::vector<Status>{Err(ErrorKind::kRefused), Status::Ok()});
      },
      &observer, nullptr, clock, CleanReport);
  EXPECT_EQ(observer.calls, 1 + 40 * 3 + 1);
  EXPECT_EQ(observer.elsewhere, 0);
}

// Records each finished host's report as the observer was handed it.
class KeepingObserver : public FleetObserver {
 public:
  void HostFinished(const HostReport& report) override { seen.push_back(report); }
  std::vector<HostReport> seen;
};

TEST(FleetRunnerTest, DropsEachReportOnceTheObserverHadItWhenAsked) {
  FakeClock clock;
  FleetSettings settings = FastSettings();
  settings.forks = 4;
  settings.retries = 0;
  settings.keep_host_reports = false;
  KeepingObserver observer;
  RunReport report = RunFleet(
      Plans(10), settings,
      [](const Host& host) {
        return std::make_unique<ScriptedTransport>(std::vector<Status>{
            host.port % 2 == 1 ? Err(ErrorKind::kConnectTimeout) : Status::Ok()});
      },
      &observer, nullptr, clock, CleanReport);
  // The observer had every report whole; the run kept only outlines.
  ASSERT_EQ(observer.seen.size(), 10u);
  for (const HostReport& seen : observer.seen) EXPECT_FALSE(seen.timings.empty());
  ASSERT_EQ(report.hosts.size(), 10u);
  EXPECT_TRUE(report.not_started.empty());
  for (int i = 0; i < 10; ++i) {
    const HostReport& host = report.hosts[i];
    EXPECT_EQ(host.name, "gpu" + std::to_string(i));
    EXPECT_EQ(host.status, i % 2 ? HostStatus::kUnreachable : HostStatus::kClean);
    EXPECT_EQ(host.error_kind, i % 2 ? ErrorKind::kConnectTimeout : ErrorKind::kNone);
    EXPECT_TRUE(host.timings.empty());
    EXPECT_TRUE(host.address.empty());
  }
}

}  // namespace
}  // namespace fleetreap
