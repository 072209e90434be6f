// The libssh handles behind one SshTransport, shared by the ssh_transport*.cc
// files and nothing else. Owns the session and the socket it runs over.
#pragma once

#include <libssh/callbacks.h>
#include <libssh/libssh.h>
#include <poll.h>
#include <pwd.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "fleetreap/base/fiber.h"
#include "fleetreap/transport/proxy_command.h"
#include "fleetreap/transport/ssh_transport.h"

namespace fleetreap {

struct SshTransport::Session {
  ssh_session session = nullptr;
  int fd = -1;                       // our socket, given to libssh with SSH_OPTIONS_FD
  bool fd_handed = false;            // set right before ssh_connect with "fd"
  ssh_callbacks_struct callbacks{};  // must outlive the session
  // A memfd holding the keys every known_hosts file records for this host,
  // which libssh reads through /proc/self/fd (only to prefer those key
  // types); -1 when there are none.
  int known_hosts_fd = -1;
  ProxyCommand proxy;  // when the ssh config names one; owns its own socket
  // Connected in a fiber: libssh runs non-blocking, and every call that
  // says "again" waits for the socket through base/fiber.h (AwaitSession),
  // so one loop thread serves many sessions. Otherwise libssh blocks.
  bool nonblocking = false;

  Session() = default;
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  ~Session() {
    // libssh 0.10 leaves a socket given by SSH_OPTIONS_FD open on
    // ssh_disconnect, but closes it itself when the connection broke: at
    // once, or in ssh_free when the session was never disconnected. Closing
    // it again would close whatever descriptor another thread got with the
    // same number meanwhile (seen in bench/soak_bench.py: a healthy host's
    // session failed with "Socket operation on non-socket").
    bool libssh_closes_fd = false;
    if (session != nullptr) {
      const bool connected = ssh_is_connected(session) != 0;
      libssh_closes_fd = fd_handed && (ssh_get_fd(session) != fd || !connected);
      if (connected) ssh_disconnect(session);
      ssh_free(session);
    }
    if (fd >= 0 && !libssh_closes_fd) close(fd);
    if (known_hosts_fd >= 0) close(known_hosts_fd);
  }
};

// Bounds libssh's blocking calls on "session" (at least 1 ms).
inline void SetSessionTimeout(ssh_session session, std::chrono::milliseconds timeout) {
  if (timeout.count() < 1) timeout = std::chrono::milliseconds(1);
  long seconds = static_cast<long>(timeout.count() / 1000);
  long micros = static_cast<long>(timeout.count() % 1000) * 1000;
  ssh_options_set(session, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_options_set(session, SSH_OPTIONS_TIMEOUT_USEC, &micros);
}

// Waits until the socket of non-blocking "session" is ready for what libssh
// wants next (to read, and to write when it has bytes queued), at most until
// "deadline" and at most a second: a state missed costs one more try, not a
// hang. In a fiber only that fiber waits.
inline void AwaitSession(ssh_session session, std::chrono::steady_clock::time_point deadline) {
  const int fd = ssh_get_fd(session);
  if (fd < 0) return;
  short events = POLLIN;
  if ((ssh_get_poll_flags(session) & SSH_WRITE_PENDING) != 0) events |= POLLOUT;
  const auto cap = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  WaitForFd(fd, events, deadline < cap ? deadline : cap);
}

// Calls "step" (a libssh call on "session") again while it returns "again"
// and "nonblocking" (Session::nonblocking), waiting for the socket in between, until it returns
// something else or "deadline" passes; then it returns "again", which is how
// a blocking call that ran out of its timeout ends too. A blocking session
// calls "step" once.
template <typename Step>
int RetryAgain(ssh_session session, bool nonblocking, int again,
               std::chrono::steady_clock::time_point deadline, Step step) {
  int rc = step();
  while (nonblocking && rc == again && std::chrono::steady_clock::now() < deadline) {
    AwaitSession(session, deadline);
    rc = step();
  }
  return rc;
}

// The local user's name and home directory, read once with getpwuid_r:
// sessions connect on the fan-out's worker threads, and getpwuid's static
// entry is not theirs to share (ThreadSanitizer saw the race).
struct LocalAccountInfo {
  std::string name;
  std::string home;
};
inline const LocalAccountInfo& LocalAccount() {
  static const LocalAccountInfo account = [] {
    LocalAccountInfo info;
    passwd entry{};
    passwd* found = nullptr;
    std::vector<char> buffer(16384);
    if (getpwuid_r(getuid(), &entry, buffer.data(), buffer.size(), &found) == 0 &&
        found != nullptr) {
      info.name = entry.pw_name != nullptr ? entry.pw_name : "";
      info.home = entry.pw_dir != nullptr ? entry.pw_dir : "";
    }
    if (info.home.empty()) {
      const char* home = getenv("HOME");
      info.home = home != nullptr ? home : "/";
    }
    return info;
  }();
  return account;
}

// What OpenSSH's %-tokens stand for in this session: "host" and "port" after
// the config, "original_host" as given, the remote user libssh will log in as.
inline ProxyTokens SessionTokens(ssh_session session, const std::string& host,
                                 const std::string& original_host, int port) {
  ProxyTokens tokens;
  tokens.host = host;
  tokens.original_host = original_host;
  tokens.port = port;
  char* user = nullptr;
  if (ssh_options_get(session, SSH_OPTIONS_USER, &user) == SSH_OK) {
    tokens.user = user;
    ssh_string_free_char(user);
  }
  tokens.local_user = LocalAccount().name;
  return tokens;
}

// The home directory as libssh takes it: from the passwd entry, not $HOME.
inline std::string SshHomeDirectory() { return LocalAccount().home; }

// The ssh config files read for "file" (SshTransportOptions::ssh_config_file).
inline std::vector<std::string> SshConfigFiles(const std::string& file) {
  if (!file.empty()) return {file};
  return {SshHomeDirectory() + "/.ssh/config", "/etc/ssh/ssh_config"};
}

}  // namespace fleetreap
