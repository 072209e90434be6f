#include "fleetreap/base/fiber.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

struct Pipe {
  int fds[2] = {-1, -1};
  Pipe() { EXPECT_EQ(pipe(fds), 0); }
  ~Pipe() {
    close(fds[0]);
    close(fds[1]);
  }
  int read_end() const { return fds[0]; }
  int write_end() const { return fds[1]; }
};

TEST(FiberTest, ManyFibersRunToTheEndOnOneThread) {
  FiberLoop loop;
  constexpr int kFibers = 2000;
  int ended = 0;
  const std::thread::id thread = std::this_thread::get_id();
  bool same_thread = true;
  for (int i = 0; i < kFibers; ++i) {
    loop.Spawn([&] {
      SleepUntil(Steady::now() + milliseconds(5));
      same_thread = same_thread && std::this_thread::get_id() == thread;
      ++ended;
    });
  }
  EXPECT_EQ(loop.Run(), 0u);
  EXPECT_EQ(ended, kFibers);
  EXPECT_TRUE(same_thread);
}

TEST(FiberTest, SleepersWakeInTheOrderOfTheirTimes) {
  FiberLoop loop;
  std::string order;
  for (int ms : {30, 10, 20}) {
    loop.Spawn([&order, ms] {
      SleepUntil(Steady::now() + milliseconds(ms));
      order += std::to_string(ms) + " ";
    });
  }
  loop.Run();
  EXPECT_EQ(order, "10 20 30 ");
}

TEST(FiberTest, AWaitForADescriptorLetsTheOtherFibersRun) {
  FiberLoop loop;
  Pipe ping;
  Pipe pong;
  std::string trace;
  loop.Spawn([&] {
    trace += "a-waits ";
    const int revents = WaitForFd(ping.read_end(), POLLIN, Steady::time_point::max());
    trace += (revents & POLLIN) ? "a-woken " : "a-wrong ";
    char byte = 0;
    EXPECT_EQ(read(ping.read_end(), &byte, 1), 1);
    EXPECT_EQ(write(pong.write_end(), "y", 1), 1);
  });
  loop.Spawn([&] {
    trace += "b-writes ";
    EXPECT_EQ(write(ping.write_end(), "x", 1), 1);
    const int revents = WaitForFd(pong.read_end(), POLLIN, Steady::now() + milliseconds(5000));
    trace += (revents & POLLIN) ? "b-woken" : "b-wrong";
  });
  EXPECT_EQ(loop.Run(), 0u);
  EXPECT_EQ(trace, "a-waits b-writes a-woken b-woken");
}

TEST(FiberTest, AWaitEndsAtItsDeadlineWithZero) {
  FiberLoop loop;
  Pipe silent;
  int revents = -2;
  bool other_ran = false;
  loop.Spawn(
      [&] { revents = WaitForFd(silent.read_end(), POLLIN, Steady::now() + milliseconds(20)); });
  loop.Spawn([&] { other_ran = true; });
  loop.Run();
  EXPECT_EQ(revents, 0);
  EXPECT_TRUE(other_ran);
}

TEST(FiberTest, ADeadlineAlreadyPastStillSeesAReadyDescriptor) {
  FiberLoop loop;
  Pipe ready;
  ASSERT_EQ(write(ready.write_end(), "x", 1), 1);
  int revents = 0;
  loop.Spawn(
      [&] { revents = WaitForFd(ready.read_end(), POLLIN, Steady::now() - milliseconds(1)); });
  loop.Run();
  EXPECT_TRUE(revents & POLLIN);
}

TEST(FiberTest, AFiberThatThrowsEndsAloneAndIsCounted) {
  FiberLoop loop;
  int ended = 0;
  loop.Spawn([&] {
    SleepUntil(Steady::now() + milliseconds(1));
    ++ended;
  });
  loop.Spawn([] { throw std::runtime_error("boom"); });
  loop.Spawn([&] {
    SleepUntil(Steady::now() + milliseconds(2));
    ++ended;
  });
  EXPECT_EQ(loop.Run(), 1u);
  EXPECT_EQ(ended, 2);
}

TEST(FiberTest, AFiberMaySpawnAnother) {
  FiberLoop loop;
  std::string trace;
  loop.Spawn([&] {
    trace += "parent ";
    loop.Spawn([&] { trace += "child"; });
  });
  loop.Run();
  EXPECT_EQ(trace, "parent child");
}

TEST(FiberTest, OutsideAFiberTheWaitsBlockTheThread) {
  EXPECT_FALSE(InFiber());
  Pipe pipe_pair;
  EXPECT_EQ(WaitForFd(pipe_pair.read_end(), POLLIN, Steady::now() + milliseconds(5)), 0);
  ASSERT_EQ(write(pipe_pair.write_end(), "x", 1), 1);
  EXPECT_TRUE(WaitForFd(pipe_pair.read_end(), POLLIN, Steady::now() + milliseconds(5)) & POLLIN);
  const Steady::time_point until = Steady::now() + milliseconds(2);
  SleepUntil(until);
  EXPECT_GE(Steady::now(), until);
}

TEST(FiberTest, NoFiberWaitsMakesTheWaitsBlockInsideAFiber) {
  FiberLoop loop;
  std::string trace;
  loop.Spawn([&] {
    EXPECT_TRUE(InFiber());
    {
      NoFiberWaits blocking;
      EXPECT_FALSE(InFiber());
      SleepUntil(Steady::now() + milliseconds(10));  // the other fiber does not run
      trace += "a ";
    }
    EXPECT_TRUE(InFiber());
  });
  loop.Spawn([&] { trace += "b"; });
  loop.Run();
  EXPECT_EQ(trace, "a b");
}

TEST(FiberTest, RunOffLoopBlocksAThreadOfItsOwnNotTheLoop) {
  FiberLoop loop;
  std::atomic<bool> work_done{false};
  bool other_ran_meanwhile = false;
  bool work_in_fiber = true;
  const std::thread::id loop_thread = std::this_thread::get_id();
  bool work_on_loop_thread = true;
  loop.Spawn([&] {
    RunOffLoop([&] {
      work_in_fiber = InFiber();
      work_on_loop_thread = std::this_thread::get_id() == loop_thread;
      std::this_thread::sleep_for(milliseconds(50));
      work_done = true;
    });
  });
  loop.Spawn([&] { other_ran_meanwhile = !work_done.load(); });
  EXPECT_EQ(loop.Run(), 0u);
  EXPECT_TRUE(work_done.load());
  EXPECT_TRUE(other_ran_meanwhile);
  EXPECT_FALSE(work_in_fiber);
  EXPECT_FALSE(work_on_loop_thread);
}

TEST(FiberTest, LoopsOnSeveralThreadsRunApart) {
  constexpr int kThreads = 4;
  std::vector<int> ended(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&ended, t] {
      FiberLoop loop;
      for (int i = 0; i < 100; ++i) {
        loop.Spawn([&ended, t] {
          SleepUntil(Steady::now() + milliseconds(1));
          ++ended[t];
        });
      }
      loop.Run();
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(ended[t], 100);
}

}  // namespace
}  // namespace fleetreap
