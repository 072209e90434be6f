#include "fleetreap/cli/progress.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "fleetreap/runner/fleet_runner.h"
#include "support/fake_clock.h"
#include "support/report_fixture.h"

namespace fleetreap {
namespace {

// A memory stream plus a clock the test moves by hand.
class ProgressTest : public ::testing::Test {
 protected:
  void SetUp() override {
    out_ = open_memstream(&buffer_, &size_);
    ASSERT_NE(out_, nullptr);
  }
  void TearDown() override {
    std::fclose(out_);
    std::free(buffer_);
  }
  std::string Output() {
    std::fflush(out_);
    return std::string(buffer_, size_);
  }
  Host HostNamed(const std::string& name) {
    Host host;
    host.name = name;
    return host;
  }

  std::FILE* out_ = nullptr;
  char* buffer_ = nullptr;
  size_t size_ = 0;
  FakeClock clock_;
};

// A transport that connects and runs nothing (the tests' cleaners do not).
class ConnectingTransport : public Transport {
 public:
  Status Connect(std::chrono::steady_clock::time_point) override { return Status::Ok(); }
  CommandResult Run(const std::string&, std::chrono::milliseconds) override { return {}; }
  void Close() override {}
  std::string Describe() const override { return "connecting"; }
};

TransportFactory ConnectingTransports() {
  return [](const Host&) { return std::make_unique<ConnectingTransport>(); };
}

std::vector<FleetPlan> Plans(const std::vector<std::string>& names) {
  std::vector<FleetPlan> plans;
  for (const std::string& name : names) {
    FleetPlan plan;
    plan.host.name = name;
    plan.host.port = static_cast<int>(plans.size());
    plans.push_back(plan);
  }
  return plans;
}

// Passes every call on to a Progress, and lets a cleaner wait until the
// Progress has been told that its host started.
class ForwardingObserver : public FleetObserver {
 public:
  explicit ForwardingObserver(Progress* progress) : progress_(progress) {}
  void RunStarted(int total) override { progress_->RunStarted(total); }
  void HostStarted(const Host& host) override {
    progress_->HostStarted(host);
    std::lock_guard<std::mutex> lock(mu_);
    started_ = true;
    changed_.notify_all();
  }
  void HostFinished(const HostReport& report) override { progress_->HostFinished(report); }
  void Interrupted() override { progress_->Interrupted(); }
  void Tick() override { progress_->Tick(); }
  void RunFinished() override { progress_->RunFinished(); }
  void AwaitStarted() {
    std::unique_lock<std::mutex> lock(mu_);
    changed_.wait(lock, [this] { return started_; });
  }

 private:
  Progress* progress_;
  std::mutex mu_;
  std::condition_variable changed_;
  bool started_ = false;
};

TEST_F(ProgressTest, OffATerminalOneLinePerFinishedHostAndNoRedraws) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{}, clock_);
  progress.RunStarted(3);
  for (int i : {4, 13, 14}) progress.HostStarted(HostNamed(run.hosts[i].name));
  for (int i : {4, 13, 14}) progress.HostFinished(run.hosts[i]);
  progress.RunFinished();
  EXPECT_EQ(Output(),
            "[1/3] gpu05 cleaned 1.2 s: 8 killed (TERM 6, KILL 2), 1 unit stopped, "
            "2 /dev/shm entries removed\n"
            "[2/3] gpu14 unreachable 1.2 s: connect_timeout after 3 attempts; Timeout "
            "connecting to 127.0.1.14\n"
            "[3/3] gpu15 failed 1.2 s: sudo; sudo: a password is required\n");
}

TEST_F(ProgressTest, LiveLineCountsHostsAndElapsedTime) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{true}, clock_);
  progress.RunStarted(16);
  for (int i = 0; i < 6; ++i) progress.HostStarted(HostNamed(run.hosts[i].name));
  progress.HostFinished(run.hosts[0]);
  progress.HostFinished(run.hosts[4]);
  clock_.Advance(std::chrono::milliseconds(2500));
  EXPECT_EQ(progress.StatusLine(),
            "2/16 done 2.5 s | slowest gpu02 connect 2.5 s | 2 clean | 4 in flight, 10 pending | "
            "next gpu03 connect 2.5 s");
  progress.Tick();
  std::string out = Output();
  EXPECT_EQ(out.rfind("\r\033[K2/16 done"), out.size() - progress.StatusLine().size() - 4);
  // Clean hosts leave no permanent line; every draw starts by clearing.
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_EQ(out.rfind("\r\033[K", 0), 0u);
}

// A dry run's hosts are counted as the verdict words them: "would clean",
// not "dirty".
TEST_F(ProgressTest, ADryRunCountsHostsThatWouldBeCleaned) {
  RunReport run = testing_fixture::DryRunFleet();
  ProgressStyle style;
  style.live = true;
  style.dry_run = true;
  Progress progress(out_, style, clock_);
  progress.RunStarted(static_cast<int>(run.hosts.size()));
  for (const HostReport& host : run.hosts) progress.HostStarted(HostNamed(host.name));
  for (const HostReport& host : run.hosts) progress.HostFinished(host);
  const std::string line = progress.StatusLine();
  EXPECT_NE(line.find("| 0 clean, 2 would clean, 1 dirty, 1 unreachable |"), std::string::npos)
      << line;
}

TEST_F(ProgressTest, LiveProblemsGetAPermanentLineAboveTheStatus) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{true}, clock_);
  progress.RunStarted(2);
  progress.HostStarted(HostNamed("gpu14"));
  progress.HostFinished(run.hosts[13]);
  progress.RunFinished();
  std::string out = Output();
  EXPECT_NE(out.find("\r\033[Kgpu14 unreachable 1.2 s: connect_timeout after 3 attempts; "
                     "Timeout connecting to 127.0.1.14\n"
                     "\r\033[K1/2 done 0.0 s | 0 clean, 1 unreachable | 0 in flight, 1 pending"),
            std::string::npos)
      << out;
  // The run ends on a cleared line, so the table starts at column 0.
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");
}

// On a terminal a problem host's permanent line wraps after its spaces at
// the terminal's width, its continuation lines 4 in, as the table's rows
// do (off a terminal it stays one line: OffATerminalOneLinePerFinishedHost...).
TEST_F(ProgressTest, LiveProblemLinesWrapAtTheTerminalWidth) {
  RunReport run = testing_fixture::MixedFleet();
  ProgressStyle style;
  style.live = true;
  style.width = 40;
  Progress progress(out_, style, clock_);
  progress.RunStarted(2);
  progress.HostStarted(HostNamed("gpu14"));
  progress.HostFinished(run.hosts[13]);
  std::string out = Output();
  EXPECT_NE(out.find("\r\033[Kgpu14 unreachable 1.2 s: connect_timeout\n"
                     "    after 3 attempts; Timeout connecting\n"
                     "    to 127.0.1.14\n"),
            std::string::npos)
      << out;
}

TEST_F(ProgressTest, LiveLineIsCutToTheTerminalWidth) {
  ProgressStyle style;
  style.live = true;
  style.width = 20;
  Progress progress(out_, style, clock_);
  progress.RunStarted(5);
  EXPECT_EQ(Output(), "\r\033[K0/5 done 0.0 s | 0 ");
}

TEST_F(ProgressTest, InterruptedSaysWhatItWaitsFor) {
  Progress progress(out_, ProgressStyle{}, clock_);
  progress.RunStarted(10);
  progress.HostStarted(HostNamed("a"));
  progress.HostStarted(HostNamed("b"));
  progress.Interrupted();
  progress.Interrupted();  // a second Ctrl-C says nothing new
  EXPECT_EQ(Output(), "interrupted: starting no new hosts, waiting for 2 in flight\n");
  EXPECT_EQ(progress.StatusLine().rfind("interrupted, 0/10 done", 0), 0u);
}

// The fleet runner watches the stop flag (what the SIGINT handler sets) and
// tells the Progress before it hands over the next event.
TEST_F(ProgressTest, StopFlagIsNoticedAtTheNextEvent) {
  RunReport run = testing_fixture::MixedFleet();
  std::atomic<bool> stop{false};
  Progress progress(out_, ProgressStyle{}, clock_);
  ForwardingObserver observer(&progress);
  FleetSettings settings;
  settings.forks = 1;
  RunReport report = RunFleet(Plans({"gpu01", "gpu02", "gpu03"}), settings, ConnectingTransports(),
                              &observer, &stop, clock_, [&](Transport&, const HostJob&) {
                                observer.AwaitStarted();
                                stop = true;  // what the SIGINT handler does
                                clock_.SleepFor(std::chrono::milliseconds(1200));
                                return run.hosts[0];
                              });
  EXPECT_EQ(Output(),
            "interrupted: starting no new hosts, waiting for 1 in flight\n"
            "[1/3] gpu01 clean 1.2 s: 8/8 GPUs 0 MiB\n");
}

TEST_F(ProgressTest, LiveLineNamesTheSlowestHostsAndTheirStep) {
  Progress progress(out_, ProgressStyle{true}, clock_);
  progress.RunStarted(3);
  progress.HostStarted(HostNamed("gpu02"));
  clock_.Advance(std::chrono::milliseconds(1000));
  progress.HostStarted(HostNamed("gpu01"));
  progress.HostStarted(HostNamed("gpu03"));
  progress.HostStep(HostNamed("gpu02"), "term 8 pids, up to 10.0 s");
  clock_.Advance(std::chrono::milliseconds(7200));
  const std::string line = progress.StatusLine();
  // The step's own time over its limit, first, so 80 columns keep it.
  EXPECT_EQ(line,
            "0/3 done 8.2 s | slowest gpu02 term 8 pids 7.2/10.0 s | 0 clean | 3 in flight, "
            "0 pending | next gpu01 connect 7.2 s");
  EXPECT_LE(line.find("10.0 s"), 79u);
  HostReport done;
  done.name = "gpu02";
  done.status = HostStatus::kClean;
  progress.HostFinished(done);
  EXPECT_NE(progress.StatusLine().find("| slowest gpu01 connect 7.2 s |"), std::string::npos);
  EXPECT_NE(progress.StatusLine().find("| next gpu03 connect 7.2 s"), std::string::npos);
}

TEST_F(ProgressTest, LogLinesGoAboveTheLiveLine) {
  Progress progress(out_, ProgressStyle{true}, clock_);
  spdlog::logger logger("test", MakeProgressLogSink(&progress));
  logger.set_pattern("fleetreap: %l: %v");
  progress.RunStarted(2);
  logger.warn("gpu07: retrying");
  EXPECT_EQ(Output(),
            "\r\033[K0/2 done 0.0 s | 0 clean | 0 in flight, 2 pending"
            "\r\033[Kfleetreap: warning: gpu07: retrying\n"
            "\r\033[K0/2 done 0.0 s | 0 clean | 0 in flight, 2 pending");
}

// Many workers, one Progress: the runner hands every event to the thread
// that called it, so the counts need no lock.
TEST_F(ProgressTest, CountsStayRightUnderConcurrentCalls) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{}, clock_);
  const int kThreads = 8;
  const int kPerThread = 50;
  FleetSettings settings;
  settings.forks = kThreads;
  std::vector<std::string> names;
  for (int i = 0; i < kThreads * kPerThread; ++i) names.push_back("h" + std::to_string(i));
  RunFleet(Plans(names), settings, ConnectingTransports(), &progress, nullptr, clock_,
           [&](Transport&, const HostJob& job) {
             return run.hosts[static_cast<size_t>(job.host->port) % run.hosts.size()];
           });
  std::string out = Output();
  int lines = 0;
  for (char c : out) lines += c == '\n';
  EXPECT_EQ(lines, kThreads * kPerThread);
  EXPECT_NE(out.find("[400/400] "), std::string::npos);
}

// Counts the ticks that reach a Progress.
class TickCounter : public ForwardingObserver {
 public:
  using ForwardingObserver::ForwardingObserver;
  void Tick() override {
    ForwardingObserver::Tick();
    ticks.fetch_add(1);
  }
  std::atomic<int> ticks{0};
};

// The runner ticks the live line while a host takes longer than a tick (the
// elapsed time is redrawn), and stops when the run ends.
TEST_F(ProgressTest, TickerThreadStopsWithTheRun) {
  ProgressStyle style;
  style.live = true;
  Progress progress(out_, style);
  TickCounter observer(&progress);
  FleetSettings settings;
  RunFleet(Plans({"gpu01"}), settings, ConnectingTransports(), &observer, nullptr, RealClock(),
           [](Transport&, const HostJob&) {
             std::this_thread::sleep_for(std::chrono::milliseconds(700));
             HostReport report;
             report.status = HostStatus::kClean;
             return report;
           });
  const int ticks = observer.ticks.load();
  EXPECT_GE(ticks, 1);
  EXPECT_NE(Output().find("| 1 in flight, 0 pending"), std::string::npos) << Output();
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  EXPECT_EQ(observer.ticks.load(), ticks);  // no tick once RunFleet has returned
}

}  // namespace
}  // namespace fleetreap
