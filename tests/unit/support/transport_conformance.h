// TransportConformance: the table of commands every Transport must run as
// /bin/sh does (exit codes, signals, each stream kept apart, a bounded
// command's 124), shared by the LocalTransport and SshTransport tests so that
// both are held to one contract. Test-only; thread-compatible.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/shell.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

struct RunCase {
  std::string command;
  CommandEnd end;
  int exit_code;
  const char* signal;
  std::string out;
  const char* err;
};

/// The commands and what every transport reports for them.
inline std::vector<RunCase> ConformanceCases() {
  using std::chrono::milliseconds;
  return {
      {"echo hi", CommandEnd::kExited, 0, "", "hi\n", ""},
      {"echo oops >&2; exit 3", CommandEnd::kExited, 3, "", "", "oops\n"},
      {"printf a; printf b >&2; printf c", CommandEnd::kExited, 0, "", "ac", "b"},
      {"true", CommandEnd::kExited, 0, "", "", ""},
      {"kill -TERM $$", CommandEnd::kSignaled, -1, "TERM", "", ""},
      {"kill -KILL $$", CommandEnd::kSignaled, -1, "KILL", "", ""},
      {"exec >&- 2>&-; exit 4", CommandEnd::kExited, 4, "", "", ""},
      {BoundedCommand("echo bounded", milliseconds(5000), false), CommandEnd::kExited, 0, "",
       StartRecordBytes() + "bounded\n", ""},
      {BoundedCommand("sleep 30", milliseconds(1000), false), CommandEnd::kExited, 124, "",
       StartRecordBytes(), ""},
  };
}

/// Runs ConformanceCases() and then "extra" on a connected "transport",
/// checking each result field by field.
inline void ExpectConformance(Transport& transport, const std::vector<RunCase>& extra = {}) {
  std::vector<RunCase> cases = ConformanceCases();
  cases.insert(cases.end(), extra.begin(), extra.end());
  for (const RunCase& c : cases) {
    SCOPED_TRACE(c.command);
    CommandResult r = transport.Run(c.command, std::chrono::milliseconds(20000));
    EXPECT_EQ(r.end, c.end) << CommandEndName(r.end) << " " << r.error;
    EXPECT_EQ(r.exit_code, c.exit_code);
    EXPECT_EQ(r.signal, c.signal);
    EXPECT_EQ(r.out, c.out);
    EXPECT_EQ(r.err, c.err);
  }
}

}  // namespace fleetreap
