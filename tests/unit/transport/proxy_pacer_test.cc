#include "fleetreap/transport/proxy_pacer.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

TEST(IsStartupDropTest, WhatSshSaysWhenMaxStartupsDropsIt) {
  const char* kDrops[] = {
      "kex_exchange_identification: read: Connection reset by peer; Connection reset by "
      "127.0.5.1 port 22",
      "kex_exchange_identification: Connection closed by remote host; Connection closed by "
      "127.0.5.1 port 22",
      "ssh_exchange_identification: read: Connection reset by peer",
  };
  for (const char* text : kDrops) EXPECT_TRUE(IsStartupDrop(text)) << text;
  const char* kOthers[] = {
      "ssh: connect to host 10.0.0.9 port 22: Connection refused",
      "channel 0: open failed: connect failed: Connection refused; stdio forwarding failed",
      "root@10.0.0.9: Permission denied (publickey).",
      "Host key verification failed.",
      "",
  };
  for (const char* text : kOthers) EXPECT_FALSE(IsStartupDrop(text)) << text;
}

TEST(ProxyRetryPauseTest, DoublesWithJitterInTheUpperHalf) {
  struct Case {
    int attempt;
    uint32_t random;
    long ms;
  };
  const Case kCases[] = {
      {1, 0, 50},  {1, 50, 100}, {1, 51, 50},    {2, 0, 100},    {2, 100, 200},
      {3, 7, 207}, {5, 0, 800},  {5, 800, 1600}, {9, 800, 1600}, {0, 0, 50},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(ProxyRetryPause(c.attempt, c.random).count(), c.ms) << c.attempt << " " << c.random;
  }
}

TEST(ProxyPacerTest, AtMostTheLimitPerCommandAtOnce) {
  ProxyPacer pacer(2);
  const auto soon = Clock::now() + milliseconds(20);
  ProxyPacer::Slot a, b, c, other;
  EXPECT_TRUE(pacer.Acquire("ssh -W %h:%p bastion", soon, &a));
  EXPECT_TRUE(pacer.Acquire("ssh -W %h:%p bastion", soon, &b));
  EXPECT_FALSE(pacer.Acquire("ssh -W %h:%p bastion", soon, &c));  // waits until "soon"
  EXPECT_FALSE(c.held());
  EXPECT_TRUE(pacer.Acquire("ssh -W %h:%p other", soon, &other));
  EXPECT_EQ(pacer.InFlight("ssh -W %h:%p bastion"), 2);
  a.Release();
  EXPECT_TRUE(pacer.Acquire("ssh -W %h:%p bastion", Clock::now(), &c));
  b = std::move(c);  // b's own place is returned, c's moves into it
  EXPECT_EQ(pacer.InFlight("ssh -W %h:%p bastion"), 1);
  b.Release();
  EXPECT_EQ(pacer.InFlight("ssh -W %h:%p bastion"), 0);
}

TEST(ProxyPacerTest, ManyThreadsNeverPassTheLimit) {
  ProxyPacer pacer(3);
  std::atomic<int> inside{0};
  std::atomic<int> most{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 12; ++i) {
    threads.emplace_back([&] {
      ProxyPacer::Slot slot;
      ASSERT_TRUE(pacer.Acquire("proxy", Clock::now() + std::chrono::seconds(30), &slot));
      const int now = ++inside;
      int seen = most.load();
      while (now > seen && !most.compare_exchange_weak(seen, now)) {
      }
      std::this_thread::sleep_for(milliseconds(5));
      --inside;
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(most.load(), 3);
  EXPECT_EQ(pacer.InFlight("proxy"), 0);
}

}  // namespace
}  // namespace fleetreap
