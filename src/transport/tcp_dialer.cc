#include "fleetreap/transport/tcp_dialer.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <thread>

#include "fleetreap/base/fiber.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;

int MillisLeft(Clock::time_point deadline) {
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) return 0;
  return left.count() > 1000000 ? 1000000 : static_cast<int>(left.count());
}

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { freeaddrinfo(info); }
};
using AddrInfoPtr = std::unique_ptr<addrinfo, AddrInfoDeleter>;

// The outcome of one getaddrinfo() call, shared with the thread that makes it
// so that a resolver slower than the deadline can be abandoned, not waited on.
struct Lookup {
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  int rc = 0;
  addrinfo* result = nullptr;
  ~Lookup() {
    if (result != nullptr) freeaddrinfo(result);
  }
};

Status Resolve(const std::string& address, int port, Clock::time_point deadline, AddrInfoPtr* out) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  const std::string service = std::to_string(port);
  // Literal addresses need no resolver and no thread.
  hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
  addrinfo* result = nullptr;
  if (getaddrinfo(address.c_str(), service.c_str(), &hints, &result) == 0) {
    out->reset(result);
    return Status::Ok();
  }
  hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
  auto lookup = std::make_shared<Lookup>();
  std::thread([lookup, address, service, hints] {
    addrinfo* found = nullptr;
    int rc = getaddrinfo(address.c_str(), service.c_str(), &hints, &found);
    std::lock_guard<std::mutex> lock(lookup->mu);
    lookup->rc = rc;
    lookup->result = found;
    lookup->done = true;
    lookup->done_cv.notify_all();
  }).detach();
  std::unique_lock<std::mutex> lock(lookup->mu);
  while (InFiber() && !lookup->done && Clock::now() < deadline) {
    // A fiber must not block its loop's thread: it looks again every 5 ms.
    lock.unlock();
    SleepUntil(std::min(deadline, Clock::now() + std::chrono::milliseconds(5)));
    lock.lock();
  }
  if (!lookup->done_cv.wait_until(lock, deadline, [&] { return lookup->done; })) {
    return Status::Error(ErrorKind::kDns, "resolving " + address + " did not finish in time");
  }
  if (lookup->rc != 0) {
    return Status::Error(ErrorKind::kDns,
                         "cannot resolve " + address + ": " + gai_strerror(lookup->rc));
  }
  out->reset(lookup->result);
  lookup->result = nullptr;
  return Status::Ok();
}

std::string Endpoint(const std::string& address, int port) {
  if (address.find(':') != std::string::npos) {
    return "[" + address + "]:" + std::to_string(port);
  }
  return address + ":" + std::to_string(port);
}

// Connects one resolved address. Returns the socket or -1 with "*status" set.
int ConnectOne(const addrinfo& info, const std::string& where, Clock::time_point deadline,
               Status* status) {
  int fd =
      socket(info.ai_family, info.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, info.ai_protocol);
  if (fd < 0) {
    *status = Status::Error(ErrorKind::kInternal, std::string("socket: ") + std::strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int rc = connect(fd, info.ai_addr, info.ai_addrlen);
  int error = rc == 0 ? 0 : errno;
  if (error == EINPROGRESS) {
    // In a fiber only that fiber waits (base/fiber.h).
    int ready;
    do {
      ready = WaitForFd(fd, POLLOUT, deadline);
    } while (ready < 0 && errno == EINTR);
    if (ready == 0) {
      close(fd);
      *status = Status::Error(ErrorKind::kConnectTimeout, "timed out connecting to " + where);
      return -1;
    }
    socklen_t len = sizeof error;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) != 0) error = errno;
  }
  if (error == 0) return fd;
  close(fd);
  if (error == ECONNREFUSED) {
    *status = Status::Error(ErrorKind::kRefused, "connection refused by " + where);
  } else {
    *status = Status::Error(ErrorKind::kConnectTimeout,
                            "cannot connect to " + where + ": " + std::strerror(error));
  }
  return -1;
}

Status AwaitBanner(int fd, const std::string& where, Clock::time_point deadline) {
  int error = 0;
  switch (AwaitFirstByte(fd, deadline, &error)) {
    case FirstByte::kArrived: return Status::Ok();
    case FirstByte::kTimedOut:
      return Status::Error(ErrorKind::kBannerTimeout,
                           "connected to " + where + " but no SSH banner came in time");
    case FirstByte::kClosed: break;
  }
  return Status::Error(ErrorKind::kConnectionLost,
                       where + " closed the connection before its SSH banner" +
                           (error != 0 ? std::string(": ") + std::strerror(error) : ""));
}

}  // namespace

FirstByte AwaitFirstByte(int fd, Clock::time_point deadline, int* error) {
  *error = 0;
  int ready;
  do {
    ready = WaitForFd(fd, POLLIN, deadline);
  } while ((ready < 0 && errno == EINTR) || (ready == 0 && MillisLeft(deadline) > 0));
  if (ready == 0) return FirstByte::kTimedOut;
  char byte;
  ssize_t n = recv(fd, &byte, 1, MSG_PEEK);
  if (n == 1) return FirstByte::kArrived;
  if (n < 0) *error = errno;
  return FirstByte::kClosed;
}

Status DialTcp(const std::string& address, int port, Clock::time_point deadline, int* fd) {
  *fd = -1;
  AddrInfoPtr addresses;
  Status status = Resolve(address, port, deadline, &addresses);
  if (!status.ok()) return status;
  const std::string where = Endpoint(address, port);
  status = Status::Error(ErrorKind::kDns, "no address for " + address);
  for (const addrinfo* info = addresses.get(); info != nullptr; info = info->ai_next) {
    int socket_fd = ConnectOne(*info, where, deadline, &status);
    if (socket_fd < 0) {
      if (status.kind() == ErrorKind::kConnectTimeout && MillisLeft(deadline) == 0) break;
      continue;
    }
    status = AwaitBanner(socket_fd, where, deadline);
    if (!status.ok()) {
      close(socket_fd);
      return status;
    }
    *fd = socket_fd;
    return Status::Ok();
  }
  return status;
}

}  // namespace fleetreap
