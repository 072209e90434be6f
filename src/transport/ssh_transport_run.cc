// SshTransport::Run: one channel per command, both streams drained through
// channel callbacks driven by an ssh_event, bounded by a local deadline.
#include <algorithm>

#include "fleetreap/transport/command_output.h"
#include "fleetreap/transport/ssh_transport.h"
#include "ssh_transport_session.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// What the callbacks learn about one channel. Lives on Run's stack, which
// outlives the channel.
struct ChannelState {
  explicit ChannelState(CommandResult* result, OutputLimits limits) : output(result, limits) {}
  OutputCollector output;
  bool closed = false;
  bool has_status = false;
  int status = -1;
  std::string signal;
  ssh_channel_callbacks_struct callbacks{};
};

int OnData(ssh_session, ssh_channel, void* data, uint32_t length, int is_stderr, void* user) {
  auto* state = static_cast<ChannelState*>(user);
  // Past a limit the data is dropped and Run stops the command.
  state->output.Add(is_stderr != 0, static_cast<const char*>(data), length);
  return static_cast<int>(length);  // all consumed, so the window reopens
}

void OnClose(ssh_session, ssh_channel, void* user) {
  static_cast<ChannelState*>(user)->closed = true;
}

void OnExitStatus(ssh_session, ssh_channel, int status, void* user) {
  auto* state = static_cast<ChannelState*>(user);
  state->has_status = true;
  state->status = status;
}

void OnExitSignal(ssh_session, ssh_channel, const char* signal, int, const char*, const char*,
                  void* user) {
  static_cast<ChannelState*>(user)->signal = signal != nullptr ? signal : "?";
}

// Unhooks our callbacks before letting go: libssh keeps a freed channel
// until the peer confirms the close, and data arriving for it meanwhile must
// not reach a ChannelState that is gone.
struct ChannelDeleter {
  ssh_channel_callbacks callbacks;
  void operator()(ssh_channel_struct* channel) const {
    ssh_remove_channel_callbacks(channel, callbacks);
    ssh_channel_close(channel);
    ssh_channel_free(channel);
  }
};

struct EventDeleter {
  ssh_session session;
  void operator()(ssh_event_struct* event) const {
    ssh_event_remove_session(event, session);
    ssh_event_free(event);
  }
};

}  // namespace

CommandResult SshTransport::Run(const std::string& command, milliseconds timeout) {
  CommandResult result;
  const Clock::time_point start = Clock::now();
  auto finish = [&](CommandEnd end, std::string error) {
    result.end = end;
    result.error = std::move(error);
    result.duration = std::chrono::duration_cast<milliseconds>(Clock::now() - start);
    return result;
  };
  if (session_ == nullptr || !ssh_is_connected(session_->session)) {
    return finish(session_ == nullptr ? CommandEnd::kNotStarted : CommandEnd::kConnectionLost,
                  "not connected");
  }
  ssh_session session = session_->session;
  ChannelState state(&result, options_.output_limits);
  state.callbacks.userdata = &state;
  state.callbacks.channel_data_function = OnData;
  state.callbacks.channel_close_function = OnClose;
  state.callbacks.channel_exit_status_function = OnExitStatus;
  state.callbacks.channel_exit_signal_function = OnExitSignal;
  ssh_callbacks_init(&state.callbacks);

  std::unique_ptr<ssh_channel_struct, ChannelDeleter> channel(ssh_channel_new(session),
                                                              ChannelDeleter{&state.callbacks});
  if (channel == nullptr) return finish(CommandEnd::kNotStarted, ssh_get_error(session));
  ssh_set_channel_callbacks(channel.get(), &state.callbacks);
  // A blocking session bounds these by its timeout (the connect timeout).
  const bool nonblocking = session_->nonblocking;
  const Clock::time_point open_by = Clock::now() + options_.connect_timeout;
  ssh_channel_struct* raw_channel = channel.get();
  int opened = RetryAgain(session, nonblocking, SSH_AGAIN, open_by,
                          [raw_channel] { return ssh_channel_open_session(raw_channel); });
  const char* step = "the server opened no session channel";
  if (opened == SSH_OK) {
    opened = RetryAgain(session, nonblocking, SSH_AGAIN, open_by, [raw_channel, &command] {
      return ssh_channel_request_exec(raw_channel, command.c_str());
    });
    step = "the server did not accept the command";
  }
  if (opened != SSH_OK) {
    // A blocking call that runs out of the session's timeout returns
    // SSH_AGAIN and leaves no error text (seen with 1,000 hosts at once).
    std::string error = opened == SSH_AGAIN ? std::string(step) + " within the connect timeout"
                                            : ssh_get_error(session);
    if (error.empty()) error = step;
    return finish(ssh_is_connected(session) ? CommandEnd::kNotStarted : CommandEnd::kConnectionLost,
                  "cannot start the command: " + error);
  }
  std::unique_ptr<ssh_event_struct, EventDeleter> event(ssh_event_new(), EventDeleter{session});
  if (event == nullptr || ssh_event_add_session(event.get(), session) != SSH_OK) {
    return finish(CommandEnd::kNotStarted, "cannot poll the session");
  }
  const Clock::time_point deadline = start + timeout + options_.command_grace;
  int errors = 0;
  while (!state.closed) {
    if (state.output.Exceeded()) {
      // Read no more: the channel closes on return, so sshd closes the
      // command's pipes and its next write fails (SIGPIPE).
      ssh_channel_request_send_signal(channel.get(), "KILL");
      state.output.Finish(std::chrono::duration_cast<milliseconds>(Clock::now() - start));
      return result;
    }
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      // The remote "timeout -k" should have ended it; ask sshd too (it may
      // ignore the request) and abandon the channel.
      ssh_channel_request_send_signal(channel.get(), "KILL");
      return finish(CommandEnd::kTimedOut,
                    "no end within " + std::to_string(timeout.count()) + " ms");
    }
    // Non-blocking (in a fiber): this fiber waits for the socket, then
    // libssh takes what came without waiting itself.
    if (nonblocking) AwaitSession(session, std::min(deadline, Clock::now() + milliseconds(200)));
    int rc = ssh_event_dopoll(
        event.get(), nonblocking ? 0 : static_cast<int>(std::min<long long>(left.count(), 200)));
    // A poll() interrupted by a signal also reads as SSH_ERROR; only a
    // session that is gone, or errors that keep coming, mean a lost connection.
    errors = rc == SSH_ERROR ? errors + 1 : 0;
    if (!ssh_is_connected(session) || errors > 3) {
      return finish(CommandEnd::kConnectionLost,
                    std::string("connection lost: ") + ssh_get_error(session));
    }
  }
  if (state.has_status) {
    result.exit_code = state.status;
    return finish(CommandEnd::kExited, "");
  }
  if (!state.signal.empty()) {
    result.signal = state.signal;
    return finish(CommandEnd::kSignaled, "");
  }
  if (!ssh_is_connected(session)) {
    return finish(CommandEnd::kConnectionLost,
                  std::string("connection lost: ") + ssh_get_error(session));
  }
  return finish(CommandEnd::kNoStatus, "channel closed without exit status");
}

}  // namespace fleetreap
