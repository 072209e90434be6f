#include "fleetreap/transport/local_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "fleetreap/transport/subprocess.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kKillGrace{2000};  // TERM to KILL
constexpr milliseconds kReapGrace{1000};  // KILL to giving up on the pipes

struct Stream {
  int fd = -1;
  bool is_stderr = false;
};

// Reads what is there on "stream" into "output"; closes it at EOF or error.
void Drain(Stream& stream, OutputCollector& output) {
  char buffer[16384];
  ssize_t n = read(stream.fd, buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    close(stream.fd);
    stream.fd = -1;
    return;
  }
  output.Add(stream.is_stderr, buffer, static_cast<size_t>(n));
}

int MillisUntil(Clock::time_point when) {
  auto left = std::chrono::duration_cast<milliseconds>(when - Clock::now());
  if (left.count() < 0) return 0;
  return static_cast<int>(left.count() > 1000 ? 1000 : left.count() + 1);
}

}  // namespace

std::string SignalName(int signal_number) {
  static const struct {
    int number;
    const char* name;
  } kNames[] = {
      {SIGHUP, "HUP"},   {SIGINT, "INT"},   {SIGQUIT, "QUIT"}, {SIGILL, "ILL"},
      {SIGTRAP, "TRAP"}, {SIGABRT, "ABRT"}, {SIGBUS, "BUS"},   {SIGFPE, "FPE"},
      {SIGKILL, "KILL"}, {SIGUSR1, "USR1"}, {SIGSEGV, "SEGV"}, {SIGUSR2, "USR2"},
      {SIGPIPE, "PIPE"}, {SIGALRM, "ALRM"}, {SIGTERM, "TERM"}, {SIGXCPU, "XCPU"},
  };
  for (const auto& entry : kNames) {
    if (entry.number == signal_number) return entry.name;
  }
  return std::to_string(signal_number);
}

LocalTransport::LocalTransport(OutputLimits limits) : limits_(limits) {}

Status LocalTransport::Connect(std::chrono::steady_clock::time_point) { return Status::Ok(); }

CommandResult LocalTransport::Run(const std::string& command, milliseconds timeout) {
  CommandResult result;
  const Clock::time_point start = Clock::now();
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    result.error = std::string("pipe: ") + std::strerror(errno);
    close(out_pipe[0]);
    close(out_pipe[1]);
    return result;
  }
  SubprocessSpec spec;
  spec.script = command;
  spec.stdin_fd = SubprocessSpec::kDevNull;
  spec.stdout_fd = out_pipe[1];
  spec.stderr_fd = err_pipe[1];
  Subprocess shell;
  Status started = shell.Start(spec);
  close(out_pipe[1]);
  close(err_pipe[1]);
  if (!started.ok()) {
    result.error = started.message();
    close(out_pipe[0]);
    close(err_pipe[0]);
    return result;
  }

  Stream streams[2] = {{out_pipe[0], false}, {err_pipe[0], true}};
  OutputCollector output(&result, limits_);
  Clock::time_point term_at = start + timeout;
  Clock::time_point kill_at = term_at + kKillGrace;
  Clock::time_point give_up_at = kill_at + kReapGrace;
  bool stopped = false;  // past an output limit: stopped now as at the deadline
  bool terminated = false;
  bool killed = false;
  bool ended = false;  // the shell has exited; its group is signalled until the reap
  while (true) {
    const Clock::time_point now = Clock::now();
    if (!stopped && output.Exceeded()) {
      // Read no more: closing the pipes makes the next write fail (SIGPIPE).
      stopped = true;
      for (Stream& s : streams) {
        if (s.fd >= 0) close(s.fd);
        s.fd = -1;
      }
      if (!terminated) {
        term_at = now;
        kill_at = now + kKillGrace;
        give_up_at = kill_at + kReapGrace;
      }
    }
    if (!terminated && now >= term_at) {
      terminated = true;
      shell.SignalGroup(SIGTERM);
    }
    if (terminated && !killed && now >= kill_at) {
      killed = true;
      shell.SignalGroup(SIGKILL);
    }
    if (!ended) ended = shell.Ended();
    bool open_streams = streams[0].fd >= 0 || streams[1].fd >= 0;
    // Background children may keep the pipes open after the shell exits;
    // those are read until the deadline like the shell itself.
    if (ended && !open_streams) break;
    if (killed && now >= give_up_at) break;
    Clock::time_point next = !terminated ? term_at : !killed ? kill_at : give_up_at;
    if (!open_streams) {
      usleep(5000);  // the shell closed its output but has not exited yet
      continue;
    }
    pollfd fds[2];
    int count = 0;
    for (const Stream& s : streams) {
      if (s.fd >= 0) fds[count++] = {s.fd, POLLIN, 0};
    }
    int timeout_ms = ended ? MillisUntil(next) : std::min(MillisUntil(next), 50);
    if (poll(fds, count, timeout_ms) < 0 && errno != EINTR) break;
    for (Stream& s : streams) {
      if (s.fd < 0) continue;
      for (int i = 0; i < count; ++i) {
        if (fds[i].fd == s.fd && fds[i].revents != 0) Drain(s, output);
      }
    }
  }
  for (Stream& s : streams) {
    if (s.fd >= 0) close(s.fd);
  }
  if (!ended) shell.SignalGroup(SIGKILL);
  int wait_status = 0;
  const bool reaped = shell.Reap(&wait_status);
  result.duration = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
  if (output.Exceeded()) {
    output.Finish(result.duration);
  } else if (terminated) {
    result.end = CommandEnd::kTimedOut;
    result.error = "timed out after " + std::to_string(timeout.count()) + " ms";
  } else if (reaped && WIFEXITED(wait_status)) {
    result.end = CommandEnd::kExited;
    result.exit_code = WEXITSTATUS(wait_status);
  } else if (reaped && WIFSIGNALED(wait_status)) {
    result.end = CommandEnd::kSignaled;
    result.signal = SignalName(WTERMSIG(wait_status));
  } else {
    result.end = CommandEnd::kConnectionLost;
    result.error = "lost track of the local shell";
  }
  return result;
}

}  // namespace fleetreap
