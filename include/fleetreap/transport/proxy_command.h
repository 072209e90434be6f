// ProxyCommand: an OpenSSH ProxyCommand (or the ProxyCommand that libssh 0.10
// makes of a ProxyJump) run by fleetreap itself instead of by libssh, so that
// it is bounded like a direct connection. It runs "/bin/sh -c 'exec CMD'" in a
// session of its own with no terminal and no askpass (so an ssh inside it
// cannot prompt, on a terminal or in a dialog),
// speaks over a socketpair, keeps its stderr for error messages, and is ended
// with its whole process group when the connection closes or is abandoned.
// One object per connection, used by one thread; not thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"
#include "fleetreap/transport/subprocess.h"

namespace fleetreap {

/// What OpenSSH's ProxyCommand tokens stand for.
struct ProxyTokens {
  std::string host;           // %h: the host to reach (after HostName)
  std::string original_host;  // %n: the name as given (the inventory address)
  int port = 22;              // %p
  std::string user;           // %r: the remote user
  std::string local_user;     // %u
};

/// Expands %h %n %p %r %u and %% in "command". A host name that a shell could
/// read as more than a name (quotes, $, ;, spaces, a leading '-'...) is
/// refused, as OpenSSH refuses it (CVE-2023-6004), as is any other token.
/// Errors are kInvalidInput with the reason.
Status ExpandProxyCommand(const std::string& command, const ProxyTokens& tokens,
                          std::string* expanded);

/// The environment a proxy runs with: this process's, less DISPLAY,
/// WAYLAND_DISPLAY and SSH_ASKPASS, with SSH_ASKPASS_REQUIRE=never (an ssh
/// in it must not raise a passphrase or confirmation dialog either).
std::vector<std::string> ProxyEnvironment();

/// Sorts what a proxy that ended before the SSH banner printed on stderr
/// into the connection error kinds (refused, dns, connect_timeout, auth,
/// host_key; connection_lost when it says nothing we know).
ErrorKind ClassifyProxyFailure(const std::string& stderr_text);

class ProxyCommand {
 public:
  ProxyCommand() = default;
  ~ProxyCommand() { Stop(); }
  ProxyCommand(const ProxyCommand&) = delete;
  ProxyCommand& operator=(const ProxyCommand&) = delete;

  /// Starts the (expanded) command. On success fd() is our end of the
  /// socketpair, non-blocking; the object keeps owning it.
  Status Start(const std::string& command);

  /// Waits until the proxy has passed on the server's first bytes (an SSH
  /// server speaks first) or "deadline". Errors: kConnectTimeout (nothing
  /// before the deadline), or the kind of ClassifyProxyFailure when the proxy
  /// ended first; the message carries the proxy's own last stderr line.
  Status AwaitBanner(std::chrono::steady_clock::time_point deadline, const std::string& where);

  int fd() const { return fd_; }

  /// The last three non-empty lines of the proxy's stderr so far, joined
  /// with "; " into one line.
  std::string StderrTail() const;

  /// Closes our end, sends SIGTERM to the proxy's process group, SIGKILL
  /// after a short grace, and reaps it. Safe to call more than once.
  void Stop();

 private:
  Subprocess process_;  // "sh -c 'exec CMD'" in a session of its own
  int fd_ = -1;
  int stderr_fd_ = -1;  // a memfd the proxy writes its stderr to
};

}  // namespace fleetreap
