#include "fleetreap/runner/fleet_runner.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "fleetreap/base/fiber.h"
#include "support/fake_clock.h"
#include "support/fleet_runner_fakes.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

struct ConnectCase {
  const char* name;
  std::vector<Status> script;
  int retries;
  HostStatus status;
  ErrorKind kind;
  int attempts;
  int retrying_calls;
};

TEST(FleetRunnerTest, ConnectOutcomesAndRetries) {
  FakeClock clock;
  const ConnectCase kCases[] = {
      {"ok", {Status::Ok()}, 2, HostStatus::kClean, ErrorKind::kNone, 1, 0},
      {"refused then ok",
       {Err(ErrorKind::kRefused), Err(ErrorKind::kRefused), Status::Ok()},
       2,
       HostStatus::kClean,
       ErrorKind::kNone,
       3,
       2},
      {"refused always",
       {Err(ErrorKind::kRefused)},
       2,
       HostStatus::kUnreachable,
       ErrorKind::kRefused,
       3,
       2},
      {"banner timeout, no retries",
       {Err(ErrorKind::kBannerTimeout)},
       0,
       HostStatus::kUnreachable,
       ErrorKind::kBannerTimeout,
       1,
       0},
      {"connection lost then ok",
       {Err(ErrorKind::kConnectionLost), Status::Ok()},
       1,
       HostStatus::kClean,
       ErrorKind::kNone,
       2,
       1},
      {"auth is not retried",
       {Err(ErrorKind::kAuth)},
       2,
       HostStatus::kUnreachable,
       ErrorKind::kAuth,
       1,
       0},
      {"host key is not retried",
       {Err(ErrorKind::kHostKey)},
       2,
       HostStatus::kUnreachable,
       ErrorKind::kHostKey,
       1,
       0},
      {"dns is not retried",
       {Err(ErrorKind::kDns)},
       2,
       HostStatus::kUnreachable,
       ErrorKind::kDns,
       1,
       0},
      {"internal is failed, not unreachable",
       {Err(ErrorKind::kInternal)},
       2,
       HostStatus::kFailed,
       ErrorKind::kInternal,
       1,
       0},
  };
  for (const ConnectCase& c : kCases) {
    SCOPED_TRACE(c.name);
    FleetSettings settings = FastSettings();
    settings.retries = c.retries;
    CountingObserver observer;
    RunReport report = RunFleet(
        Plans(1), settings,
        [&](const Host&) { return std::make_unique<ScriptedTransport>(c.script); }, &observer,
        nullptr, clock, CleanReport);
    ASSERT_EQ(report.hosts.size(), 1u);
    const HostReport& host = report.hosts[0];
    EXPECT_EQ(host.status, c.status);
    EXPECT_EQ(host.error_kind, c.kind);
    EXPECT_EQ(host.attempts, c.attempts);
    EXPECT_EQ(host.name, "gpu0");
    EXPECT_EQ(host.address, "10.0.0.0");
    EXPECT_EQ(host.port, 2200);
    ASSERT_FALSE(host.timings.empty());
    EXPECT_EQ(host.timings[0].step, "connect");
    EXPECT_EQ(observer.count("retrying"), c.retrying_calls);
    EXPECT_EQ(observer.count("started"), 1);
    EXPECT_EQ(observer.count("finished"), 1);
    EXPECT_EQ(observer.count("run_finished"), 1);
    EXPECT_EQ(observer.total(), 1);
  }
}

TEST(FleetRunnerTest, ConnectEndsByTheHostDeadline) {
  FakeClock clock;
  // Without --host-timeout or --deadline only the connect timeout bounds it;
  // with one, Connect must end by it even when the connect timeout is longer.
  for (milliseconds host_timeout : {milliseconds(0), milliseconds(1500)}) {
    SCOPED_TRACE(host_timeout.count());
    FleetSettings settings = FastSettings();
    settings.host_timeout = host_timeout;
    std::chrono::steady_clock::time_point seen{};
    const auto before = clock.Now();
    RunFleet(
        Plans(1), settings,
        [&](const Host&) {
          return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()}, &seen);
        },
        nullptr, nullptr, clock, CleanReport);
    if (host_timeout.count() == 0) {
      EXPECT_EQ(seen, kNoDeadline);
    } else {
      EXPECT_GE(seen, before + host_timeout);
      EXPECT_LE(seen, clock.Now() + host_timeout);
    }
  }
}

TEST(FleetRunnerTest, KeepsInputOrderAndEveryHost) {
  FakeClock clock;
  // Odd hosts are unreachable, even ones clean; 200 hosts over 16 forks.
  FleetSettings settings = FastSettings();
  settings.forks = 16;
  settings.retries = 0;
  RunReport report = RunFleet(
      Plans(200), settings,
      [](const Host& host) {
        bool odd = (host.port % 2) == 1;
        return std::make_unique<ScriptedTransport>(
            std::vector<Status>{odd ? Err(ErrorKind::kConnectTimeout) : Status::Ok()});
      },
      nullptr, nullptr, clock, CleanReport);
  ASSERT_EQ(report.hosts.size(), 200u);
  EXPECT_TRUE(report.not_started.empty());
  EXPECT_FALSE(report.interrupted);
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(report.hosts[i].name, "gpu" + std::to_string(i));
    EXPECT_EQ(report.hosts[i].status, i % 2 ? HostStatus::kUnreachable : HostStatus::kClean);
  }
}

TEST(FleetRunnerTest, NeverMoreThanForksInFlight) {
  FakeClock clock;
  std::mutex mu;
  std::condition_variable changed;
  int in_flight = 0;
  int most = 0;
  FleetSettings settings = FastSettings();
  settings.forks = 3;
  settings.fanout = Fanout::kThreads;  // the cleaner below blocks its thread
  RunReport report = RunFleet(
      Plans(12), settings,
      [](const Host&) {
        return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()});
      },
      nullptr, nullptr, clock,
      [&](Transport& t, const HostJob& job) {
        std::unique_lock<std::mutex> lock(mu);
        most = std::max(most, ++in_flight);
        changed.notify_all();
        // Hold the first slots until the pool has been full once.
        changed.wait_for(lock, std::chrono::seconds(10), [&] { return most >= 3; });
        --in_flight;
        return CleanReport(t, job);
      });
  EXPECT_EQ(report.hosts.size(), 12u);
  EXPECT_EQ(most, 3);
}

// kFibers: every host is in flight at once (the cleaners wait as fibers, as
// the SSH transport does), yet a few loop threads carry them all.
TEST(FleetRunnerTest, FibersCarryEveryHostInFlightOnAFewThreads) {
  FakeClock clock;
  constexpr int kHosts = 200;
  std::mutex mu;
  std::set<std::thread::id> threads;
  std::atomic<int> in_flight{0};
  std::atomic<int> most{0};
  FleetSettings settings = FastSettings();
  settings.forks = kHosts;
  ASSERT_EQ(settings.fanout, Fanout::kFibers);  // the default
  RunReport report = RunFleet(
      Plans(kHosts), settings,
      [](const Host&) {
        return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()});
      },
      nullptr, nullptr, clock,
      [&](Transport& t, const HostJob& job) {
        {
          std::lock_guard<std::mutex> lock(mu);
          threads.insert(std::this_thread::get_id());
        }
        const int now = ++in_flight;
        for (int seen = most.load(); seen < now && !most.compare_exchange_weak(seen, now);) {
        }
        // Hold the slot until every host has been in flight at once.
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
        while (most.load() < kHosts && std::chrono::steady_clock::now() < give_up) {
          SleepUntil(std::chrono::steady_clock::now() + milliseconds(1));
        }
        --in_flight;
        return CleanReport(t, job);
      });
  EXPECT_EQ(report.hosts.size(), static_cast<size_t>(kHosts));
  EXPECT_EQ(most.load(), kHosts);
  EXPECT_GE(threads.size(), 1u);
  EXPECT_LE(threads.size(), 8u);
}

TEST(FleetRunnerTest, StopRequestedLeavesTheRestNotStarted) {
  FakeClock clock;
  std::atomic<bool> stop{false};
  FleetSettings settings = FastSettings();
  settings.forks = 1;
  RunReport report = RunFleet(
      Plans(5), settings,
      [](const Host&) {
        return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()});
      },
      nullptr, &stop, clock,
      [&](Transport& t, const HostJob& job) {
        stop = true;  // Ctrl-C while the first host runs: it still finishes
        return CleanReport(t, job);
      });
  ASSERT_EQ(report.hosts.size(), 1u);
  EXPECT_EQ(report.hosts[0].status, HostStatus::kClean);
  EXPECT_EQ(report.not_started, (std::vector<std::string>{"gpu1", "gpu2", "gpu3", "gpu4"}));
  EXPECT_TRUE(report.interrupted);
}

TEST(FleetRunnerTest, PassedDeadlineStartsNothingMore) {
  FakeClock clock;
  FleetSettings settings = FastSettings();
  settings.forks = 1;
  settings.deadline = milliseconds(1);
  RunReport report = RunFleet(
      Plans(3), settings,
      [](const Host&) {
        return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()});
      },
      nullptr, nullptr, clock,
      [&](Transport& t, const HostJob& job) {
        clock.SleepFor(milliseconds(20));  // outlives the deadline
        return CleanReport(t, job);
      });
  EXPECT_EQ(report.hosts.size() + report.not_started.size(), 3u);
  EXPECT_FALSE(report.not_started.empty());
  EXPECT_FALSE(report.interrupted);
}

TEST(FleetRunnerTest, JobCarriesSettings) {
  FakeClock clock;
  FleetSettings settings = FastSettings();
  settings.dry_run = true;
  settings.command_timeout = milliseconds(1234);
  settings.host_timeout = milliseconds(60000);
  settings.extra_protect = {"my-daemon"};
  std::vector<FleetPlan> plans = Plans(2);
  plans[1].host.become = true;
  std::mutex mu;
  std::vector<HostJob> jobs;
  RunFleet(
      plans, settings,
      [](const Host&) {
        return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()});
      },
      nullptr, nullptr, clock,
      [&](Transport& t, const HostJob& job) {
        std::lock_guard<std::mutex> lock(mu);
        jobs.push_back(job);
        return CleanReport(t, job);
      });
  ASSERT_EQ(jobs.size(), 2u);
  for (const HostJob& job : jobs) {
    EXPECT_TRUE(job.dry_run);
    EXPECT_EQ(job.command_timeout, milliseconds(1234));
    EXPECT_EQ(job.extra_protect, std::vector<std::string>{"my-daemon"});
    EXPECT_NE(job.deadline, std::chrono::steady_clock::time_point::max());
    EXPECT_EQ(job.playbook, &DefaultPlaybook());
    EXPECT_EQ(job.become, job.host->name == "gpu1");
  }
}

TEST(FleetRunnerTest, NullTransportFailsOnlyThatHost) {
  FakeClock clock;
  RunReport report = RunFleet(
      Plans(2), FastSettings(),
      [](const Host& host) -> std::unique_ptr<Transport> {
        if (host.name == "gpu0") return nullptr;
        return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()});
      },
      nullptr, nullptr, clock, CleanReport);
  ASSERT_EQ(report.hosts.size(), 2u);
  EXPECT_EQ(report.hosts[0].status, HostStatus::kFailed);
  EXPECT_EQ(report.hosts[0].error_kind, ErrorKind::kInternal);
  EXPECT_EQ(report.hosts[1].status, HostStatus::kClean);
}

// A throw out of one host's cleaner fails that host alone (internal), on
// threads and on fibers; the others end as usual.
TEST(FleetRunnerTest, AThrowFailsOnlyThatHost) {
  for (Fanout fanout : {Fanout::kThreads, Fanout::kFibers}) {
    FakeClock clock;
    FleetSettings settings = FastSettings();
    settings.fanout = fanout;
    settings.forks = 2;
    RunReport report = RunFleet(
        Plans(3), settings,
        [](const Host&) {
          return std::make_unique<ScriptedTransport>(std::vector<Status>{Status::Ok()});
        },
        nullptr, nullptr, clock,
        [](Transport& t, const HostJob& job) -> HostReport {
          if (job.host->name == "gpu1") throw std::length_error("basic_string::_M_create");
          return CleanReport(t, job);
        });
    ASSERT_EQ(report.hosts.size(), 3u);
    EXPECT_EQ(report.hosts[0].status, HostStatus::kClean);
    EXPECT_EQ(report.hosts[1].status, HostStatus::kFailed);
    EXPECT_EQ(report.hosts[1].error_kind, ErrorKind::kInternal);
    EXPECT_EQ(report.hosts[1].name, "gpu1");
    EXPECT_NE(report.hosts[1].error_message.find("basic_string::_M_create"), std::string::npos);
    EXPECT_EQ(report.hosts[2].status, HostStatus::kClean);
  }
}

// Offers a host key on connect, then succeeds or fails as told.
class KeyedTransport : public ScriptedTransport {
 public:
  explicit KeyedTransport(Status status) : ScriptedTransport({std::move(status)}) {}
  std::string HostKeyFingerprint() const override { return "SHA256:abc"; }
};

TEST(FleetRunnerTest, ReportsTheHostKeyOffered) {
  FakeClock clock;
  FleetSettings settings = FastSettings();
  RunReport report = RunFleet(
      Plans(2), settings,
      [](const Host& host) -> std::unique_ptr<Transport> {
        return std::make_unique<KeyedTransport>(host.name == "gpu0" ? Status::Ok()
                                                                    : Err(ErrorKind::kHostKey));
      },
      nullptr, nullptr, clock, CleanReport);
  EXPECT_EQ(report.host_key_policy, "");  // the caller's to set (SetRunMetadata)
  ASSERT_EQ(report.hosts.size(), 2u);
  EXPECT_EQ(report.hosts[0].host_key_fingerprint, "SHA256:abc");
  EXPECT_EQ(report.hosts[1].error_kind, ErrorKind::kHostKey);
  EXPECT_EQ(report.hosts[1].host_key_fingerprint, "SHA256:abc");
}

TEST(FleetRunnerTest, RetryBackoffWaitsOnTheClockAndEndsAtCtrlC) {
  FakeClock clock;
  FleetSettings settings = FastSettings();
  settings.retry_backoff = milliseconds(1000);
  auto refused = [](const Host&) {
    return std::make_unique<ScriptedTransport>(std::vector<Status>{Err(ErrorKind::kRefused)});
  };
  RunReport report = RunFleet(Plans(1), settings, refused, nullptr, nullptr, clock, CleanReport);
  ASSERT_EQ(report.hosts.size(), 1u);
  EXPECT_EQ(report.hosts[0].attempts, 3);
  EXPECT_EQ(clock.slept(), milliseconds(3000));  // 1 s, then 2 s
  EXPECT_EQ(report.hosts[0].duration, milliseconds(3000));

  // Ctrl-C during the first backoff: no further attempt, no further wait.
  std::atomic<bool> stop{false};
  FakeClock stopped_clock;
  report = RunFleet(
      Plans(1), settings,
      [&](const Host&) {
        stop = true;
        return std::make_unique<ScriptedTransport>(std::vector<Status>{Err(ErrorKind::kRefused)});
      },
      nullptr, &stop, stopped_clock, CleanReport);
  ASSERT_EQ(report.hosts.size(), 1u);
  EXPECT_EQ(report.hosts[0].attempts, 1);
  EXPECT_EQ(report.hosts[0].error_kind, ErrorKind::kRefused);
  EXPECT_EQ(stopped_clock.slept(), milliseconds(0));
}

}  // namespace
}  // namespace fleetreap
