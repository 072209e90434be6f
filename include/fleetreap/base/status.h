// Status: the error value every fallible fleetreap call returns. It keeps the
// kinds of failure apart that the report and the exit code must keep apart:
// a host that could not be reached is not a host that ran and failed.
// Value type; thread-compatible.
#pragma once

#include <string>
#include <utility>

namespace fleetreap {

enum class ErrorKind {
  kNone,
  kUsage,         // bad command line
  kInvalidInput,  // inventory or playbook: file, line and problem
  kParse,         // a host printed something we could not read
  kDns,
  kRefused,
  kConnectTimeout,
  kBannerTimeout,
  kKex,
  kHostKey,
  kAuth,
  kSudo,
  kCommandTimeout,
  kConnectionLost,
  kCommandFailed,  // a remote command ran and reported failure
  kHostTimeout,    // --host-timeout or --deadline ended this host
  kInterrupted,    // Ctrl-C stopped this host's ladder at a step boundary
  kInternal,
};

/// The stable snake_case name used in reports: "connect_timeout", "host_key"...
const char* ErrorKindName(ErrorKind kind);

/// True for kinds that mean "never reached the host": dns, refused, connect and
/// banner timeouts, kex, host_key, auth, connection_lost.
bool IsUnreachable(ErrorKind kind);

/// True for kinds worth retrying before anything was done on the host:
/// refused, connect and banner timeouts, connection_lost.
bool IsTransient(ErrorKind kind);

class [[nodiscard]] Status {
 public:
  Status() = default;
  static Status Ok() { return Status(); }
  static Status Error(ErrorKind kind, std::string message) {
    return Status(kind, std::move(message));
  }

  bool ok() const { return kind_ == ErrorKind::kNone; }
  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  /// "connect_timeout: Timeout connecting to 127.0.1.4"
  std::string ToString() const;

 private:
  Status(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) {}
  ErrorKind kind_ = ErrorKind::kNone;
  std::string message_;
};

}  // namespace fleetreap
