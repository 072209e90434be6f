#include "fleetreap/transport/local_transport.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "support/transport_conformance.h"

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

TEST(LocalTransportTest, EndsAndStreams) {
  LocalTransport transport;
  ASSERT_TRUE(transport.Connect(kNoDeadline).ok());
  ExpectConformance(transport, {{"cat", CommandEnd::kExited, 0, "", "", ""}});  // stdin: /dev/null
}

TEST(LocalTransportTest, DrainsBothLargeStreamsTogether) {
  LocalTransport transport({3 << 20, 3 << 20});
  // 2 MiB on each stream, interleaved: a reader of one stream only would stall.
  CommandResult r = transport.Run("head -c 2097152 /dev/zero >&2 & head -c 2097152 /dev/zero; wait",
                                  milliseconds(60000));
  EXPECT_EQ(r.end, CommandEnd::kExited) << r.error;
  EXPECT_EQ(r.out.size(), 2097152u);
  EXPECT_EQ(r.err.size(), 2097152u);
  EXPECT_FALSE(r.out_truncated);
}

TEST(LocalTransportTest, OutputPastTheLimitStopsTheCommand) {
  struct Case {
    const char* command;
    const char* error;
    size_t out;
    size_t err;
  };
  // "yes" never ends by itself; the limit ends it at once, long before the
  // 60 s timeout. A stream is read up to its limit, the other one as is, or
  // less: the limit may stop the command before the other pipe was read.
  const Case kCases[] = {
      {"echo start >&2; yes", "stdout exceeded 1000 bytes, stopped reading", 1000, 6},
      {"echo start; yes >&2", "stderr exceeded 100 bytes, stopped reading", 6, 100},
      {"trap '' TERM PIPE; while :; do echo x; done", "stdout exceeded 1000 bytes, stopped reading",
       1000, 0},
  };
  LocalTransport transport({1000, 100});
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.command);
    CommandResult r = transport.Run(c.command, milliseconds(60000));
    EXPECT_EQ(r.end, CommandEnd::kOutputLimit) << CommandEndName(r.end) << " " << r.error;
    EXPECT_EQ(r.error, c.error);
    EXPECT_EQ(std::max(r.out.size(), r.err.size()), std::max(c.out, c.err));
    EXPECT_LE(r.out.size(), c.out);
    EXPECT_LE(r.err.size(), c.err);
    EXPECT_LT(r.duration, milliseconds(10000));  // TERM, at worst KILL 2 s later
    EXPECT_FALSE(r.Succeeded());
  }
  CommandResult under = transport.Run("head -c 1000 /dev/zero", milliseconds(60000));
  EXPECT_TRUE(under.Succeeded()) << under.error;
  EXPECT_EQ(under.out.size(), 1000u);
}

TEST(LocalTransportTest, TimeoutEndsTheWholeProcessGroup) {
  LocalTransport transport;
  // The child ignores TERM, so the group needs the KILL that follows.
  CommandResult r = transport.Run("trap '' TERM; sleep 30 & echo started; wait", milliseconds(300));
  EXPECT_EQ(r.end, CommandEnd::kTimedOut);
  EXPECT_EQ(r.out, "started\n");
  EXPECT_FALSE(r.Succeeded());
}

TEST(LocalTransportTest, SignalNames) {
  EXPECT_EQ(SignalName(9), "KILL");
  EXPECT_EQ(SignalName(15), "TERM");
  EXPECT_EQ(SignalName(200), "200");
}

}  // namespace
}  // namespace fleetreap
