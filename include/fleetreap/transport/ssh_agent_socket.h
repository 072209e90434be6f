// SshAgentSocket: fleetreap's connection to ssh-agent, which libssh then
// speaks over (ssh_set_agent_socket) instead of opening its own. libssh 0.10
// reads and writes the agent socket blocking with no timeout, so a stalled or
// forwarded agent, a key added with "ssh-add -c" (a confirmation dialog), a
// FIDO key waiting for a touch or a gpg-agent waiting for a PIN would hold a
// worker forever. Here the connect itself never blocks, and a watch thread
// shuts the socket down for reading at a deadline: a read libssh is blocked in
// then returns end-of-file, the agent reads as having no key, and expired()
// says why. No libssh type appears here.
// One object per authentication attempt, used by one thread (the watch
// thread is internal); not thread-safe.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>

#include "fleetreap/base/status.h"

namespace fleetreap {

class SshAgentSocket {
 public:
  using Clock = std::chrono::steady_clock;

  SshAgentSocket() = default;
  /// Stops the watch; closes whatever socket was not released.
  ~SshAgentSocket();
  SshAgentSocket(const SshAgentSocket&) = delete;
  SshAgentSocket& operator=(const SshAgentSocket&) = delete;

  /// Connects to the agent listening at "path" without blocking (a full
  /// listen queue is retried until "deadline") and starts the watch: at
  /// "deadline" the socket is shut down for reading. Errors are kAuth,
  /// naming the agent: "ssh-agent at PATH: cannot connect: ...".
  Status Connect(const std::string& path, Clock::time_point deadline);

  /// A socket with no agent behind it: reads see end-of-file at once and
  /// writes are absorbed, so libssh finds "no key" without connecting to
  /// anything itself (its own connect would be unbounded).
  Status ConnectNowhere();

  /// The socket for libssh. It stays valid until the object is destroyed or
  /// release() was called; after release() the new owner closes it, and it
  /// must outlive this object (the watch may shut it down until then).
  int fd() const { return fd_; }
  int release();

  /// True once the deadline shut the socket down: whatever the agent was
  /// asked after that got no answer.
  bool expired() const;

  const std::string& path() const { return path_; }

 private:
  void Watch(Clock::time_point deadline);
  void StopWatch();

  std::string path_;
  int fd_ = -1;
  int peer_fd_ = -1;  // ConnectNowhere's other end, kept open
  bool owned_ = true;
  std::thread watch_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  bool expired_ = false;
};

}  // namespace fleetreap
