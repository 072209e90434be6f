// CommandLog: the per-host logs of --log-dir. It decorates each host's
// Transport so that every connect, every command sent (with its timeout),
// how it ended (exit code, signal, timeout), how long it took and what it
// printed land in DIR/<host>.log, appended, one timestamped entry at a time.
// The log is text: in what a command printed, each NUL byte (the host's
// records are NUL-separated) is written as "\0" and a line break, and each
// backslash as "\\"; every other byte as the host sent it. Output past a cap
// per stream is cut with a note saying how much was left out (the byte
// counts are of the output as sent). The CommandLog is shared by every worker thread; each wrapped
// transport writes only its own host's file, so hosts never interleave.
// Thread-safe.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "fleetreap/base/clock.h"
#include "fleetreap/base/status.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

class CommandLog {
 public:
  /// Output kept per stream and command before the log cuts it.
  static constexpr size_t kDefaultMaxOutputBytes = size_t{64} * 1024;

  /// Creates "dir" (and missing parents) mode 0700. On failure returns
  /// kInternal:
  ///   cannot create log directory /x/y: Permission denied
  /// and kUsage when the directory is not safe to write into as this user:
  /// owned by another uid, writable by its group or others, or holding a
  /// symbolic link (each file is opened O_NOFOLLOW, mode 0600, too):
  ///   --log-dir /tmp/logs: owned by uid 1000, not by uid 0 (this user)
  ///   --log-dir /tmp/logs: writable by its group or others (mode 0777); make it 0700
  ///   --log-dir /tmp/logs: gpu01.log is a symbolic link; refusing to write through it
  /// "clock"'s wall time stamps the entries and times connects (tests pass
  /// a fake one); it must outlive the log and every transport it wraps.
  static Status Open(const std::string& dir, std::unique_ptr<CommandLog>* log,
                     Clock& clock = RealClock(), size_t max_output_bytes = kDefaultMaxOutputBytes);

  /// DIR/<name>.log, with every character outside [A-Za-z0-9._-] of the
  /// host name replaced by '_' so a name can never leave the directory.
  std::string PathFor(const std::string& host_name) const;

  /// Returns a Transport that forwards every call to "inner" and logs it to
  /// the file of "host_name". A file that cannot be opened costs the log, not
  /// the host: calls still go through (and one warning goes to spdlog).
  /// The CommandLog must outlive the returned transport.
  std::unique_ptr<Transport> Wrap(const std::string& host_name,
                                  std::unique_ptr<Transport> inner) const;

 private:
  CommandLog(std::string dir, Clock& clock, size_t max_output_bytes);

  std::string dir_;
  Clock& clock_;
  size_t max_output_bytes_;
};

}  // namespace fleetreap
