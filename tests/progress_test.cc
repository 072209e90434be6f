#include "fleetreap/cli/progress.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>

#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "report_fixture.h"

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
  Progress::Clock FakeClock() {
    return [this] { return now_; };
  }
  Host HostNamed(const std::string& name) {
    Host host;
    host.name = name;
    return host;
  }

  std::FILE* out_ = nullptr;
  char* buffer_ = nullptr;
  size_t size_ = 0;
  std::chrono::steady_clock::time_point now_{};
};

TEST_F(ProgressTest, OffATerminalOneLinePerFinishedHostAndNoRedraws) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{}, FakeClock());
  progress.RunStarted(3);
  for (int i : {4, 13, 14}) progress.HostStarted(HostNamed(run.hosts[i].name));
  for (int i : {4, 13, 14}) progress.HostFinished(run.hosts[i]);
  progress.RunFinished();
  EXPECT_EQ(Output(),
            "[1/3] gpu05 cleaned: 8 killed (TERM 6, KILL 2), 1 unit stopped, "
            "2 /dev/shm entries removed (1.2 s)\n"
            "[2/3] gpu14 unreachable: connect_timeout after 3 attempts (1.2 s)\n"
            "[3/3] gpu15 failed: sudo (1.2 s)\n");
}

TEST_F(ProgressTest, LiveLineCountsHostsAndElapsedTime) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{true}, FakeClock());
  progress.RunStarted(16);
  for (int i = 0; i < 6; ++i) progress.HostStarted(HostNamed(run.hosts[i].name));
  progress.HostFinished(run.hosts[0]);
  progress.HostFinished(run.hosts[4]);
  now_ += std::chrono::milliseconds(2500);
  EXPECT_EQ(progress.StatusLine(),
            "2/16 done, 4 in flight, 10 pending | 2 clean, 0 dirty, 0 unreachable, "
            "0 failed | 2.5 s");
  progress.Tick();
  std::string out = Output();
  EXPECT_EQ(out.rfind("\r\033[K2/16 done"), out.size() - progress.StatusLine().size() - 4);
  // Clean hosts leave no permanent line; every draw starts by clearing.
  EXPECT_EQ(out.find('\n'), std::string::npos);
  EXPECT_EQ(out.rfind("\r\033[K", 0), 0u);
}

TEST_F(ProgressTest, LiveProblemsGetAPermanentLineAboveTheStatus) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{true}, FakeClock());
  progress.RunStarted(2);
  progress.HostStarted(HostNamed("gpu14"));
  progress.HostFinished(run.hosts[13]);
  progress.RunFinished();
  std::string out = Output();
  EXPECT_NE(out.find("\r\033[Kgpu14 unreachable: connect_timeout after 3 attempts (1.2 s)\n"
                     "\r\033[K1/2 done, 0 in flight, 1 pending"),
            std::string::npos)
      << out;
  // The run ends on a cleared line, so the table starts at column 0.
  EXPECT_EQ(out.substr(out.size() - 4), "\r\033[K");
}

TEST_F(ProgressTest, LiveLineIsCutToTheTerminalWidth) {
  ProgressStyle style;
  style.live = true;
  style.width = 20;
  Progress progress(out_, style, FakeClock());
  progress.RunStarted(5);
  EXPECT_EQ(Output(), "\r\033[K0/5 done, 0 in flig");
}

TEST_F(ProgressTest, InterruptedSaysWhatItWaitsFor) {
  Progress progress(out_, ProgressStyle{}, FakeClock());
  progress.RunStarted(10);
  progress.HostStarted(HostNamed("a"));
  progress.HostStarted(HostNamed("b"));
  progress.Interrupted();
  progress.Interrupted();  // a second Ctrl-C says nothing new
  EXPECT_EQ(Output(), "interrupted: starting no new hosts, waiting for 2 in flight\n");
  EXPECT_NE(progress.StatusLine().find("| interrupted"), std::string::npos);
}

TEST_F(ProgressTest, StopFlagIsNoticedAtTheNextEvent) {
  RunReport run = testing_fixture::MixedFleet();
  std::atomic<bool> stop{false};
  Progress progress(out_, ProgressStyle{}, FakeClock());
  progress.WatchStopFlag(&stop);
  progress.RunStarted(3);
  progress.HostStarted(HostNamed("gpu01"));
  stop = true;  // what the SIGINT handler does
  progress.HostFinished(run.hosts[0]);
  progress.RunFinished();
  EXPECT_EQ(Output(),
            "interrupted: starting no new hosts, waiting for 1 in flight\n"
            "[1/3] gpu01 clean: 8/8 GPUs 0 MiB (1.2 s)\n");
}

TEST_F(ProgressTest, LogLinesGoAboveTheLiveLine) {
  Progress progress(out_, ProgressStyle{true}, FakeClock());
  spdlog::logger logger("test", MakeProgressLogSink(&progress));
  logger.set_pattern("fleetreap: %l: %v");
  progress.RunStarted(2);
  logger.warn("gpu07: retrying");
  EXPECT_EQ(Output(),
            "\r\033[K0/2 done, 0 in flight, 2 pending | 0 clean, 0 dirty, 0 unreachable, "
            "0 failed | 0.0 s"
            "\r\033[Kfleetreap: warning: gpu07: retrying\n"
            "\r\033[K0/2 done, 0 in flight, 2 pending | 0 clean, 0 dirty, 0 unreachable, "
            "0 failed | 0.0 s");
}

TEST_F(ProgressTest, CountsStayRightUnderConcurrentCalls) {
  RunReport run = testing_fixture::MixedFleet();
  Progress progress(out_, ProgressStyle{}, FakeClock());
  const int kThreads = 8;
  const int kPerThread = 50;
  progress.RunStarted(kThreads * kPerThread);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        const HostReport& host = run.hosts[(t + i) % run.hosts.size()];
        progress.HostStarted(HostNamed(host.name));
        progress.HostFinished(host);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  progress.RunFinished();
  std::string out = Output();
  int lines = 0;
  for (char c : out) lines += c == '\n';
  EXPECT_EQ(lines, kThreads * kPerThread);
  EXPECT_NE(out.find("[400/400] "), std::string::npos);
}

TEST_F(ProgressTest, TickerThreadStopsWithTheRun) {
  ProgressStyle style;
  style.live = true;
  style.tick = std::chrono::milliseconds(1);
  Progress progress(out_, style);
  progress.RunStarted(1);
  progress.RunFinished();
  SUCCEED();  // joined without hanging
}

}  // namespace
}  // namespace fleetreap

namespace fleetreap {
namespace {

TEST(ProgressStyleTest, NoRedrawsOffATerminal) {
  std::FILE* file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  Options options;
  options.dry_run = true;
  options.color = "always";
  ProgressStyle style = ProgressStyleFor(options, file);
  std::fclose(file);
  EXPECT_FALSE(style.live);
  EXPECT_EQ(style.tick.count(), 250);  // checks the Ctrl-C flag, never redraws
  EXPECT_EQ(style.width, 0);
  EXPECT_TRUE(style.dry_run);
  EXPECT_EQ(style.color, std::getenv("NO_COLOR") == nullptr ||
                             std::getenv("NO_COLOR")[0] == '\0');
}

}  // namespace
}  // namespace fleetreap
