// The step parsers (scan_output.h, stop_units.h, signal.h, shm_clean.h,
// gpu_reset.h), one test per step's reply: the signal wave, /dev/shm and
// the GPU reset (the stops with the first wave, one batch: batch_test.cc).
// The real scripts run under /bin/sh in each step's own test (signal_test.cc...).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "fleetreap/remote/gpu_reset.h"
#include "fleetreap/remote/shm_clean.h"
#include "fleetreap/remote/signal.h"
#include "fleetreap/remote/stop_units.h"

namespace fleetreap {
namespace {

std::string Nul(const std::string& text) { return text + '\0'; }

struct Bad {
  std::string out;
  const char* error;
};

TEST(RemoteScriptOutputTest, SignalReply) {
  SignalReply sig;
  ASSERT_TRUE(ParseSignalOutput(Nul("signal 1") + Nul("now 123456789") + Nul("sent 10") +
                                    Nul("gone 11") + Nul("failed 12") + Nul("left 10 D") +
                                    Nul("end"),
                                &sig)
                  .ok());
  EXPECT_EQ(sig.now, 123456789u);
  EXPECT_EQ(sig.sent, std::vector<int>{10});
  EXPECT_EQ(sig.gone, std::vector<int>{11});
  EXPECT_EQ(sig.failed, std::vector<int>{12});
  ASSERT_EQ(sig.left.size(), 1u);
  EXPECT_EQ(sig.left[0].second, 'D');
}

TEST(RemoteScriptOutputTest, SignalReplyRefusals) {
  SignalReply sig;
  const std::string head = Nul("signal 1") + Nul("now 5");
  const Bad bad_signals[] = {
      {"", "parse: signal output: nothing printed"},
      {head + "sent 10", "parse: signal output: cut short (the last record has no end)"},
      {head + Nul("sent 10"), "parse: signal output: expected \"end\", got the end"},
      {Nul("signal 2") + Nul("now 5") + Nul("end"),
       "parse: signal output record 1: unknown signal version 2"},
      {head + Nul("boom") + Nul("end"),
       "parse: signal output record 3: expected \"end\", got \"boom\""},
      {head + Nul("sent 10:x") + Nul("end"),
       "parse: signal output record 3: expected \"sent|gone|failed PID\", got \"sent 10\""},
      {head + Nul("sent 99999999999") + Nul("end"),
       "parse: signal output record 3: bad or repeated PID \"sent 99999999999\""},
      {head + Nul("sent 7") + Nul("gone 7") + Nul("end"),
       "parse: signal output record 4: bad or repeated PID \"gone 7\""},
      {head + Nul("left 7 S") + Nul("end"), "parse: signal output record 3: bad \"left 7 S\""},
      {head + Nul("end") + Nul("sent 7"), "parse: signal output record 4: unexpected \"sent 7\""},
      {head + Nul("sent\n7") + Nul("end"),
       "parse: signal output: record 3 has a bad tag \"sent?7\""},
      {Nul("signal 1") + Nul("now x1") + Nul("end"),
       "parse: signal output record 2: bad clock now x1"},
  };
  for (const Bad& row : bad_signals) {
    EXPECT_EQ(ParseSignalOutput(row.out, &sig).ToString(), row.error) << row.out;
  }
}

TEST(RemoteScriptOutputTest, ShmClean) {
  ShmOutput shm;
  ASSERT_TRUE(
      ParseShmOutput(
          Nul("shm 1") + Nul("removed:nccl-AbC\n@@end") + Nul("inuse:psm_1") + Nul("end"), &shm)
          .ok());
  EXPECT_EQ(shm.removed, std::vector<std::string>{"nccl-AbC\n@@end"});
  EXPECT_EQ(shm.in_use, std::vector<std::string>{"psm_1"});
  EXPECT_EQ(ParseShmOutput(Nul("shm 1") + Nul("removed:x"), &shm).ToString(),
            "parse: shm output: expected \"end\", got the end");
}

TEST(RemoteScriptOutputTest, GpuReset) {
  std::vector<GpuReset> resets;
  ASSERT_TRUE(ParseGpuResetOutput(Nul("reset 3 255:GPU 00000000:0B:00.0 is currently in use by "
                                      "another process.\n\n") +
                                      Nul("reset 4 0:GPU reset ok") + Nul("end"),
                                  &resets)
                  .ok());
  ASSERT_EQ(resets.size(), 2u);
  EXPECT_EQ(resets[0].gpu, 3);
  EXPECT_EQ(resets[0].exit_code, 255);
  EXPECT_EQ(resets[0].message, "GPU 00000000:0B:00.0 is currently in use by another process.");
  EXPECT_EQ(resets[1].exit_code, 0);
}

}  // namespace
}  // namespace fleetreap
