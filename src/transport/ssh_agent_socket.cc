#include "fleetreap/transport/ssh_agent_socket.h"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace fleetreap {
namespace {

constexpr std::chrono::milliseconds kBusyRetry{20};

}  // namespace

SshAgentSocket::~SshAgentSocket() {
  StopWatch();
  if (fd_ >= 0 && owned_) close(fd_);
  if (peer_fd_ >= 0) close(peer_fd_);
}

Status SshAgentSocket::Connect(const std::string& path, Clock::time_point deadline) {
  path_ = path;
  auto fail = [&](const std::string& why) {
    return Status::Error(ErrorKind::kAuth, "ssh-agent at " + path + ": " + why);
  };
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    return fail("not a usable socket path");
  }
  std::memcpy(address.sun_path, path.data(), path.size());
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return fail(std::string("cannot create a socket: ") + std::strerror(errno));
  // A UNIX stream connect completes at once or fails with EAGAIN when the
  // agent's listen queue is full (it accepts nothing): retry until the deadline.
  while (connect(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0) {
    const int error = errno;
    if (error == EINTR) continue;
    if (error == EAGAIN && Clock::now() + kBusyRetry < deadline) {
      std::this_thread::sleep_for(kBusyRetry);
      continue;
    }
    close(fd);
    if (error == EAGAIN) return fail("does not accept connections (its queue is full)");
    return fail(std::string("cannot connect: ") + std::strerror(error));
  }
  // libssh expects a blocking socket; the watch bounds it.
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  fd_ = fd;
  Watch(deadline);
  return Status::Ok();
}

Status SshAgentSocket::ConnectNowhere() {
  path_.clear();
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) {
    return Status::Error(ErrorKind::kInternal, std::string("socketpair: ") + std::strerror(errno));
  }
  // The peer stays open (so a write is no EPIPE) and will never send.
  shutdown(pair[1], SHUT_WR);
  fd_ = pair[0];
  peer_fd_ = pair[1];
  return Status::Ok();
}

int SshAgentSocket::release() {
  owned_ = false;
  return fd_;
}

bool SshAgentSocket::expired() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return expired_;
}

void SshAgentSocket::Watch(Clock::time_point deadline) {
  const int fd = fd_;
  watch_ = std::thread([this, fd, deadline] {
    std::unique_lock<std::mutex> lock(mutex_);
    if (wake_.wait_until(lock, deadline, [this] { return stop_; })) return;
    // Wakes a read blocked in the socket with end-of-file, now and later.
    // Writes still go through, so no SIGPIPE reaches libssh's caller.
    shutdown(fd, SHUT_RD);
    expired_ = true;
  });
}

void SshAgentSocket::StopWatch() {
  if (!watch_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  watch_.join();
}

}  // namespace fleetreap
