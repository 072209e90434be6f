// JumpPump: one bastion's connection and the thread that owns it, for
// SshJumps (ssh_jump.h) and nothing else. The thread connects an SshTransport
// to the bastion, then loops: it opens the direct-tcpip channels the hosts
// ask for (Submit), and moves bytes both ways between each channel and its
// socketpair, with poll() over every socket and non-blocking libssh calls, so
// no host waits on another. Everything but the libssh session is guarded by
// mutex_; the session is the thread's alone.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "fleetreap/base/status.h"
#include "fleetreap/transport/ssh_transport.h"

namespace fleetreap {

// One host's request for a channel. The fields after "deadline" are guarded
// by the pump's mutex.
struct JumpRequest {
  std::string host;
  int port = 22;
  std::chrono::steady_clock::time_point deadline;
  bool done = false;
  bool abandoned = false;  // the host gave up waiting: the pump drops it
  Status status;
  int fd = -1;  // the host's end of the socketpair, when done and ok
};

class JumpPump {
 public:
  // "name" is the bastion as the ProxyJump wrote it; "bastion" how to reach
  // it. Starts the thread, which connects when the first request comes.
  JumpPump(std::string name, SshTransportOptions bastion);
  ~JumpPump();  // Stop(), then joins the thread
  JumpPump(const JumpPump&) = delete;
  JumpPump& operator=(const JumpPump&) = delete;

  // Queues "request"; false (nothing queued) once this pump has closed.
  bool Submit(const std::shared_ptr<JumpRequest>& request);

  // Waits until the request is done or its deadline (plus a moment for the
  // pump's own verdict) has passed; then gives the host's fd or the error.
  Status Await(const std::shared_ptr<JumpRequest>& request, int* fd);

  // Closes every channel and the connection, and fails what is queued.
  void Stop();

 private:
  struct Loop;  // the thread's own state (ssh_jump_pump.cc)

  void Run();
  // One turn of the loop: take new requests, advance the openings, move
  // bytes, then wait for the next event. False (with "*ended" set when it
  // was not idleness) when the loop is over.
  bool Turn(Loop* loop, Status* ended);
  void Advance(Loop* loop);  // the openings: done, failed or given up
  // Waits for the next event, or only looks when bytes just "moved".
  void Poll(Loop* loop, bool moved);
  // Marks "request" done under mutex_ and wakes its waiter; returns false
  // (and does nothing) when the host already gave up.
  bool Finish(const std::shared_ptr<JumpRequest>& request, Status status, int fd);
  void Wake();
  std::string Prefix() const;  // "bastion NAME (user@address:port): "

  const std::string name_;
  const SshTransportOptions options_;
  int wake_fd_ = -1;  // an eventfd: Submit and Stop poke the thread

  std::mutex mutex_;
  std::condition_variable finished_;
  std::deque<std::shared_ptr<JumpRequest>> queue_;
  bool closed_ = false;  // no more requests taken
  bool stop_ = false;
  std::string destination_;  // "user@address:port" once known
  std::thread thread_;
};

}  // namespace fleetreap
