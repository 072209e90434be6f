#include "fleetreap/local_transport.h"

#include <gtest/gtest.h>

namespace fleetreap {
namespace {

using std::chrono::milliseconds;

struct RunCase {
  const char* command;
  CommandEnd end;
  int exit_code;
  const char* signal;
  const char* out;
  const char* err;
};

TEST(LocalTransportTest, EndsAndStreams) {
  const RunCase kCases[] = {
      {"echo hi", CommandEnd::kExited, 0, "", "hi\n", ""},
      {"echo oops >&2; exit 3", CommandEnd::kExited, 3, "", "", "oops\n"},
      {"printf a; printf b >&2; printf c", CommandEnd::kExited, 0, "", "ac", "b"},
      {"kill -TERM $$", CommandEnd::kSignaled, -1, "TERM", "", ""},
      {"kill -KILL $$", CommandEnd::kSignaled, -1, "KILL", "", ""},
      {"true", CommandEnd::kExited, 0, "", "", ""},
      {"exec >&- 2>&-; exit 4", CommandEnd::kExited, 4, "", "", ""},
      {"cat", CommandEnd::kExited, 0, "", "", ""},  // stdin is /dev/null
  };
  LocalTransport transport;
  ASSERT_TRUE(transport.Connect(kNoDeadline).ok());
  for (const RunCase& c : kCases) {
    SCOPED_TRACE(c.command);
    CommandResult r = transport.Run(c.command, milliseconds(20000));
    EXPECT_EQ(r.end, c.end) << CommandEndName(r.end) << " " << r.error;
    EXPECT_EQ(r.exit_code, c.exit_code);
    EXPECT_EQ(r.signal, c.signal);
    EXPECT_EQ(r.out, c.out);
    EXPECT_EQ(r.err, c.err);
  }
}

TEST(LocalTransportTest, DrainsBothLargeStreamsTogether) {
  LocalTransport transport;
  // 2 MiB on each stream, interleaved: a reader of one stream only would stall.
  CommandResult r = transport.Run(
      "head -c 2097152 /dev/zero >&2 & head -c 2097152 /dev/zero; wait",
      milliseconds(60000));
  EXPECT_EQ(r.end, CommandEnd::kExited) << r.error;
  EXPECT_EQ(r.out.size(), 2097152u);
  EXPECT_EQ(r.err.size(), 2097152u);
  EXPECT_FALSE(r.out_truncated);
}

TEST(LocalTransportTest, CapsOutputButKeepsReading) {
  LocalTransport transport(1000);
  CommandResult r = transport.Run("head -c 100000 /dev/zero; echo done >&2",
                                  milliseconds(60000));
  EXPECT_EQ(r.end, CommandEnd::kExited);
  EXPECT_EQ(r.out.size(), 1000u);
  EXPECT_TRUE(r.out_truncated);
  EXPECT_EQ(r.err, "done\n");
  EXPECT_FALSE(r.err_truncated);
}

TEST(LocalTransportTest, TimeoutEndsTheWholeProcessGroup) {
  LocalTransport transport;
  // The child ignores TERM, so the group needs the KILL that follows.
  CommandResult r = transport.Run(
      "trap '' TERM; sleep 30 & echo started; wait", milliseconds(300));
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
