#include "ssh_jump_pump.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <list>
#include <utility>
#include <vector>

#include "fleetreap/base/text.h"
#include "fleetreap/transport/ssh_jump.h"
#include "ssh_transport_session.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr size_t kChunk = size_t{32} * 1024;
// A host waits this long past its deadline for the pump's own verdict (the
// bastion's connect ends by the first host's deadline).
constexpr milliseconds kVerdictGrace{250};

// One host's forwarded channel and the pump's end of its socketpair.
struct Link {
  ssh_channel channel = nullptr;
  int fd = -1;
  std::string to_channel;   // read from the host, not yet sent on the channel
  std::string to_socket;    // read from the channel, not yet written to the host
  bool remote_eof = false;  // the channel's EOF (the target closed)
  bool shut = false;        // that EOF passed on to the host
  bool done = false;
};

// A channel being opened for a host.
struct Opening {
  std::shared_ptr<JumpRequest> request;
  ssh_channel channel = nullptr;
  bool orphan = false;  // its host gave up waiting
};

void CloseLink(Link* link) {
  if (link->channel != nullptr) {
    if (ssh_channel_is_open(link->channel) != 0) ssh_channel_close(link->channel);
    ssh_channel_free(link->channel);
    link->channel = nullptr;
  }
  if (link->fd >= 0) close(link->fd);
  link->fd = -1;
}

// Moves what can move now, both ways, without blocking: the channel's data to
// the host's socket, the host's bytes onto the channel (within its window).
// Returns whether any byte moved (then more may be waiting in libssh's
// buffers, which no poll() sees). A link is done when the host has closed
// its end, or the channel is closed and all it said was passed on.
bool PumpLink(Link* link) {
  char buffer[kChunk];
  bool moved = false;
  if (link->to_socket.empty() && !link->remote_eof) {
    const int n = ssh_channel_read_nonblocking(link->channel, buffer, sizeof(buffer), 0);
    if (n > 0) {
      link->to_socket.assign(buffer, static_cast<size_t>(n));
    } else if (n == SSH_EOF) {
      link->remote_eof = true;
    } else if (n == SSH_ERROR) {
      link->done = true;
      return true;
    }
  }
  if (!link->to_socket.empty()) {
    const ssize_t n =
        send(link->fd, link->to_socket.data(), link->to_socket.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      link->to_socket.erase(0, static_cast<size_t>(n));
      moved = true;
    } else if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
      link->done = true;
      return true;
    }
  }
  if (link->remote_eof && link->to_socket.empty() && !link->shut) {
    shutdown(link->fd, SHUT_WR);
    link->shut = true;
  }
  if (link->to_channel.empty()) {
    const ssize_t n = recv(link->fd, buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      link->to_channel.assign(buffer, static_cast<size_t>(n));
    } else if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
      link->done = true;  // the host's session is over
      return true;
    }
  }
  if (!link->to_channel.empty()) {
    const size_t window = ssh_channel_window_size(link->channel);
    const size_t size = std::min(window, link->to_channel.size());
    if (size > 0) {
      const int n =
          ssh_channel_write(link->channel, link->to_channel.data(), static_cast<uint32_t>(size));
      if (n == SSH_ERROR) {
        link->done = true;
        return true;
      }
      link->to_channel.erase(0, static_cast<size_t>(n));
      moved = moved || n > 0;
    }
  }
  if (ssh_channel_is_closed(link->channel) != 0 && link->to_socket.empty()) link->done = true;
  return moved || link->done;
}

}  // namespace

JumpPump::JumpPump(std::string name, SshTransportOptions bastion)
    : name_(std::move(name)), options_(std::move(bastion)) {
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  thread_ = std::thread([this] { Run(); });
}

JumpPump::~JumpPump() {
  Stop();
  if (thread_.joinable()) thread_.join();
  if (wake_fd_ >= 0) close(wake_fd_);
}

bool JumpPump::Submit(const std::shared_ptr<JumpRequest>& request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (closed_) return false;
    queue_.push_back(request);
  }
  Wake();
  return true;
}

void JumpPump::Stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  Wake();
}

void JumpPump::Wake() {
  const uint64_t one = 1;
  if (wake_fd_ >= 0 && write(wake_fd_, &one, sizeof(one)) < 0) {
    // The counter is full, so the thread is woken anyway.
  }
}

std::string JumpPump::Prefix() const {
  return "bastion " + name_ + (destination_.empty() ? "" : " (" + destination_ + ")") + ": ";
}

Status JumpPump::Await(const std::shared_ptr<JumpRequest>& request, int* fd) {
  std::unique_lock<std::mutex> lock(mutex_);
  finished_.wait_until(lock, request->deadline + kVerdictGrace, [&] { return request->done; });
  if (!request->done) {
    request->abandoned = true;
    return Status::Error(ErrorKind::kConnectTimeout, Prefix() + "no channel to " + request->host +
                                                         ":" + std::to_string(request->port) +
                                                         " within the connect timeout");
  }
  *fd = request->fd;
  request->fd = -1;
  return request->status;
}

bool JumpPump::Finish(const std::shared_ptr<JumpRequest>& request, Status status, int fd) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (request->abandoned || request->done) return false;
  request->done = true;
  request->status = std::move(status);
  request->fd = fd;
  finished_.notify_all();
  return true;
}

// The thread's own state once the bastion is connected.
struct JumpPump::Loop {
  ssh_session session = nullptr;
  ssh_event event = nullptr;
  std::vector<Opening> openings;
  std::list<Link> links;
  Clock::time_point idle_since = Clock::now();

  // A host's channel, or an opening a host still waits for.
  bool Busy() const {
    if (!links.empty()) return true;
    for (const Opening& opening : openings) {
      if (!opening.orphan) return true;
    }
    return false;
  }
};

void JumpPump::Run() {
  Clock::time_point deadline;  // the first request's
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (stop_ || !queue_.empty()) {
        deadline = queue_.empty() ? Clock::now() : queue_.front()->deadline;
        break;
      }
    }
    pollfd wake{wake_fd_, POLLIN, 0};
    poll(&wake, 1, 100);
  }
  SshTransport bastion(options_);
  Status ended = bastion.Connect(std::min(deadline, Clock::now() + options_.connect_timeout));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    destination_ = bastion.Destination();
  }
  Loop loop;
  if (ended.ok()) {
    loop.session = bastion.session_->session;
    ssh_set_blocking(loop.session, 0);
    loop.event = ssh_event_new();
    if (loop.event == nullptr || ssh_event_add_session(loop.event, loop.session) != SSH_OK) {
      ended = Status::Error(ErrorKind::kInternal, "ssh_event_new failed");
    }
  }
  while (ended.ok() && Turn(&loop, &ended)) {
  }
  std::deque<std::shared_ptr<JumpRequest>> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    closed_ = true;
    left.swap(queue_);
  }
  for (Opening& opening : loop.openings) {
    if (!opening.orphan) left.push_back(opening.request);
    if (opening.channel != nullptr) ssh_channel_free(opening.channel);
  }
  for (auto& request : left) {
    Finish(request,
           Status::Error(ended.ok() ? ErrorKind::kConnectionLost : ended.kind(),
                         Prefix() + (ended.ok() ? "closed" : ended.message())),
           -1);
  }
  for (Link& link : loop.links) CloseLink(&link);
  if (loop.event != nullptr) {
    ssh_event_remove_session(loop.event, loop.session);
    ssh_event_free(loop.event);
  }
  bastion.Close();
}

bool JumpPump::Turn(Loop* loop, Status* ended) {
  std::deque<std::shared_ptr<JumpRequest>> fresh;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stop_) {
      *ended = Status::Error(ErrorKind::kConnectionLost, "closed at the end of the run");
      return false;
    }
    fresh.swap(queue_);
  }
  for (auto& request : fresh) {
    loop->openings.push_back({request, ssh_channel_new(loop->session), false});
  }
  Advance(loop);
  bool moved = false;
  for (Link& link : loop->links) moved = PumpLink(&link) || moved;
  for (auto it = loop->links.begin(); it != loop->links.end();) {
    if (it->done) {
      CloseLink(&*it);
      it = loop->links.erase(it);
    } else {
      ++it;
    }
  }
  if (ssh_is_connected(loop->session) == 0) {
    *ended = Status::Error(
        ErrorKind::kConnectionLost,
        std::string("the connection to the bastion was lost: ") + ssh_get_error(loop->session));
    return false;
  }
  const Clock::time_point now = Clock::now();
  if (loop->Busy()) {
    loop->idle_since = now;
  } else if (now - loop->idle_since >= SshJumps::kLinger) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (queue_.empty()) {
      closed_ = true;  // idle: the next host starts a new connection
      return false;
    }
  }
  Poll(loop, moved);
  return true;
}

void JumpPump::Advance(Loop* loop) {
  const Clock::time_point now = Clock::now();
  for (auto it = loop->openings.begin(); it != loop->openings.end();) {
    const JumpRequest& request = *it->request;
    const int rc = it->channel == nullptr
                       ? SSH_ERROR
                       : ssh_channel_open_forward(it->channel, request.host.c_str(), request.port,
                                                  "127.0.0.1", 0);
    if (rc == SSH_AGAIN) {
      // A host that gave up: its channel is closed once the bastion answers.
      if (now > request.deadline + kVerdictGrace) it->orphan = true;
      ++it;
      continue;
    }
    int pair[2] = {-1, -1};
    if (it->orphan) {
      if (rc == SSH_OK) ssh_channel_close(it->channel);
      ssh_channel_free(it->channel);
    } else if (rc == SSH_OK && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0) {
      fcntl(pair[0], F_SETFL, fcntl(pair[0], F_GETFL) | O_NONBLOCK);
      Link link;
      link.channel = it->channel;
      link.fd = pair[0];
      loop->links.push_back(std::move(link));
      // A host that gave up meanwhile: its end closes, so the link ends.
      if (!Finish(it->request, Status::Ok(), pair[1])) close(pair[1]);
    } else {
      std::string why = std::string("socketpair: ") + std::strerror(errno);
      ErrorKind kind = ErrorKind::kInternal;
      if (rc != SSH_OK) kind = ClassifyChannelOpenFailure(ssh_get_error(loop->session), &why);
      // destination_ is written by this thread only, before the loop.
      Finish(it->request,
             Status::Error(kind, Prefix() + "could not reach " + request.host + ":" +
                                     std::to_string(request.port) + ": " + why),
             -1);
      if (it->channel != nullptr) ssh_channel_free(it->channel);
    }
    it = loop->openings.erase(it);
  }
}

void JumpPump::Poll(Loop* loop, bool moved) {
  std::vector<pollfd> fds;
  fds.push_back({wake_fd_, POLLIN, 0});
  const bool writing = (ssh_get_poll_flags(loop->session) & SSH_WRITE_PENDING) != 0;
  fds.push_back(
      {ssh_get_fd(loop->session), static_cast<short>(POLLIN | (writing ? POLLOUT : 0)), 0});
  for (const Link& link : loop->links) {
    short events = link.to_channel.empty() ? POLLIN : 0;
    if (!link.to_socket.empty()) events |= POLLOUT;
    fds.push_back({link.fd, events, 0});
  }
  // After bytes moved, more may wait in libssh's buffers: look, do not wait.
  // Openings are checked against their deadlines; the rest wakes us.
  poll(fds.data(), fds.size(), moved ? 0 : loop->openings.empty() ? 500 : 50);
  if (fds[0].revents != 0) {
    uint64_t count = 0;
    if (read(wake_fd_, &count, sizeof(count)) < 0) count = 0;
  }
  ssh_event_dopoll(loop->event, 0);  // libssh reads and writes its socket
}

}  // namespace fleetreap
