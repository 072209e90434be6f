// CommandOutput: the one rule for how much of a command's output the
// controller keeps, shared by every Transport (SshTransport, LocalTransport).
// A command's stdout is kept up to kStdoutLimit and its stderr up to
// kStderrLimit; the first byte past either limit stops the command: the
// transport reads nothing more of it and ends it (closes the channel, or
// signals the local process group), and the result is kOutputLimit with an
// error that names the stream and the limit. So a host that prints hundreds
// of megabytes costs the controller at most the two limits per command in
// flight, and little time.
// OutputCollector is used by one thread, for one command; not thread-safe.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "fleetreap/transport/transport.h"

namespace fleetreap {

/// 4 MiB of stdout. The largest honest output is an inspect's: about 3 KiB
/// per GPU holder (its stat, status, cmdline, cgroup, exe and fd records)
/// plus nvidia-smi's text. Measured on the simulated fleet: 87 KB for a node
/// with the 21 protected daemons and the vLLM incident (30 holders), 43 KB
/// for the incident beside 500 other processes; 4 MiB leaves room for about
/// 1,400 holders. With --forks 64 all hostile: 64 x 4 MiB = 256 MiB at most.
inline constexpr size_t kStdoutLimit = size_t{4} << 20;

/// 64 KiB of stderr: the scripts send their tools' errors to /dev/null or
/// into their records; stderr carries only the shell's and sudo's words.
inline constexpr size_t kStderrLimit = size_t{64} << 10;

struct OutputLimits {
  size_t out = kStdoutLimit;
  size_t err = kStderrLimit;
};

/// "4 MiB", "64 KiB", "1000 bytes": a limit as the error messages say it.
std::string ByteCount(size_t bytes);

/// Collects one command's two streams into a CommandResult under "limits".
/// Holds a pointer to "result", which must outlive it.
class OutputCollector {
 public:
  OutputCollector(CommandResult* result, OutputLimits limits);

  /// Keeps what fits of "data" on stdout (or stderr). Returns false once a
  /// stream has gone past its limit: the bytes past it are dropped, the
  /// stream's truncated flag is set, and the caller must stop the command.
  /// After that every call drops its data and returns false.
  bool Add(bool is_stderr, const char* data, size_t length);

  bool Exceeded() const { return !exceeded_.empty(); }

  /// Marks "result" kOutputLimit with the error "stdout exceeded 4 MiB,
  /// stopped reading" (or stderr and its limit). Call only when Exceeded().
  void Finish(std::chrono::milliseconds duration) const;

 private:
  CommandResult* result_;
  OutputLimits limits_;
  std::string exceeded_;  // "stdout exceeded 4 MiB" once a limit was passed
};

}  // namespace fleetreap
