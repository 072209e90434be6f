// Transport: the only door to a host. The escalation and the fleet runner reach
// a host through this interface alone; libssh lives behind SshTransport, the
// local machine behind LocalTransport (--local), scripted fakes in unit tests.
// A Transport is used by one thread at a time; it is not thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// How a command ended.
enum class CommandEnd {
  kExited,          // exit_code holds the status
  kSignaled,        // the remote process died from "signal" (e.g. "KILL")
  kTimedOut,        // our deadline passed; the remote side was bounded too
  kConnectionLost,  // the session died under the command
  kNotStarted,      // the command could not be started (channel refused...)
  kOutputLimit,     // it printed past a limit of command_output.h; it was stopped
  kNoStatus,        // the channel closed without an exit status or signal
};

const char* CommandEndName(CommandEnd end);

/// For Transport::Connect: no host or run deadline, only the connect timeout.
inline constexpr std::chrono::steady_clock::time_point kNoDeadline =
    std::chrono::steady_clock::time_point::max();

struct CommandResult {
  CommandEnd end = CommandEnd::kNotStarted;
  int exit_code = -1;  // valid when end == kExited
  std::string signal;  // valid when end == kSignaled, without "SIG"
  std::string out;     // stdout, at most kStdoutLimit (command_output.h)
  std::string err;     // stderr, at most kStderrLimit
  bool out_truncated = false;
  bool err_truncated = false;
  std::chrono::milliseconds duration{0};
  std::string error;  // transport-level detail when not kExited

  bool Succeeded() const { return end == CommandEnd::kExited && exit_code == 0; }
};

class Transport {
 public:
  virtual ~Transport() = default;

  /// Opens the connection (TCP, banner, key exchange, host key, auth). Errors
  /// carry the classified kind (dns, refused, connect_timeout, ...). Calling it
  /// again after a failure retries from scratch. The attempt ends by
  /// "not_after" (a host or run deadline) even when the connect timeout
  /// would allow longer; time_point::max() means no such limit.
  virtual Status Connect(std::chrono::steady_clock::time_point not_after) = 0;

  /// Runs "command" with /bin/sh semantics. The command is bounded on both
  /// sides: the remote side by wrapping it (timeout -k), this side by a
  /// deadline of "timeout" plus a small grace. Both output streams are always
  /// drained together, each up to its limit in command_output.h; past it the
  /// command is stopped and ends as kOutputLimit. Never throws.
  virtual CommandResult Run(const std::string& command, std::chrono::milliseconds timeout) = 0;

  /// Names what the next Run is for ("term: signal"), for a transport that
  /// keeps a log of its commands (--log-dir); the others ignore it. The name
  /// holds for that one Run.
  virtual void NameNextCommand(const std::string& /*name*/) {}

  /// Closes the connection. Safe to call more than once.
  virtual void Close() = 0;

  /// A short name for logs: "root@127.0.1.3:22" or "local".
  virtual std::string Describe() const = 0;

  /// The host key the last Connect was offered ("SHA256:...", as ssh-keygen
  /// -l prints it), also when the key was refused; "" when there is none
  /// (no key exchange, or no SSH at all).
  virtual std::string HostKeyFingerprint() const { return ""; }

  /// The type of that key as OpenSSH names it ("ED25519", "RSA",
  /// "ECDSA"); "" when there is none.
  virtual std::string HostKeyType() const { return ""; }

  /// The known_hosts file the last Connect recorded the offered key in
  /// (--host-key-policy accept-new, a key seen for the first time); "" when
  /// it recorded none.
  virtual std::string HostKeyAcceptedInto() const { return ""; }
};

/// Looks at a finished command for sudo's "a password is required" refusal.
bool IsSudoRefusal(const CommandResult& result);

}  // namespace fleetreap
