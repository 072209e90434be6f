#include "fleetreap/transport/ssh_transport.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <utility>

#include "fleetreap/base/fiber.h"
#include "fleetreap/base/text.h"
#include "fleetreap/transport/proxy_pacer.h"
#include "fleetreap/transport/ssh_jump.h"
#include "fleetreap/transport/tcp_dialer.h"
#include "ssh_transport_session.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Never ask anyone for anything: libssh calls this for passphrases.
int RefusePrompt(const char*, char*, size_t, int, int, void*) { return -1; }

// Sorts what ssh_connect() said into our kinds. Our socket (or proxy) has
// already seen the banner, so resolution and TCP cannot be the cause.
Status ClassifyConnectError(const std::string& error, const std::string& where,
                            milliseconds timeout) {
  if (Contains(error, "Timeout") || Contains(error, "timeout")) {
    return Status::Error(ErrorKind::kConnectTimeout,
                         where + ": SSH handshake did not finish within " +
                             std::to_string(timeout.count()) + " ms (" + error + ")");
  }
  if (Contains(error, "disconnected") || Contains(error, "reset") ||
      Contains(error, "Broken pipe") || Contains(error, "Socket error") ||
      Contains(error, "closed")) {
    // Our own socket saw the banner, so the server hung up in the middle of
    // key exchange: that is sshd refusing the negotiation (no algorithm in
    // common). Which of the two libssh notices first (the server's offer or
    // the closed socket) is a race; both are the same failure.
    return Status::Error(ErrorKind::kKex, where +
                                              ": key exchange failed: the server closed the "
                                              "connection during key exchange (no algorithm in "
                                              "common?): " +
                                              error);
  }
  return Status::Error(ErrorKind::kKex, where + ": key exchange failed: " + error);
}

}  // namespace

SshTransport::SshTransport(SshTransportOptions options) : options_(std::move(options)) {}

SshTransport::~SshTransport() = default;

void SshTransport::Close() { session_.reset(); }

std::string SshTransport::Describe() const {
  std::string user = options_.user;
  if (user.empty()) user = LocalAccount().name;
  const bool v6 = options_.address.find(':') != std::string::npos;
  return user + "@" + (v6 ? "[" + options_.address + "]" : options_.address) + ":" +
         std::to_string(options_.port);
}

Status SshTransport::Connect(Clock::time_point not_after) {
  Close();
  fingerprint_.clear();
  key_type_.clear();
  accepted_into_.clear();
  const Clock::time_point start = Clock::now();
  Clock::time_point deadline =  // later by the wait for a proxy's turn, if any
      not_after - start < options_.connect_timeout ? not_after : start + options_.connect_timeout;
  const milliseconds budget = std::chrono::duration_cast<milliseconds>(deadline - start);
  const std::string where = options_.name.empty() || options_.name == options_.address
                                ? options_.address
                                : options_.name + " (" + options_.address + ")";
  auto state = std::make_unique<Session>();
  state->session = ssh_new();
  if (state->session == nullptr) {
    return Status::Error(ErrorKind::kInternal, "ssh_new failed");
  }
  ssh_session session = state->session;
  int verbosity = SSH_LOG_NOLOG;
  ssh_options_set(session, SSH_OPTIONS_LOG_VERBOSITY, &verbosity);
  ssh_options_set(session, SSH_OPTIONS_HOST, options_.address.c_str());
  bool process_config = options_.use_ssh_config;
  ssh_options_set(session, SSH_OPTIONS_PROCESS_CONFIG, &process_config);
  const char* config_file =
      options_.ssh_config_file.empty() ? nullptr : options_.ssh_config_file.c_str();
  if (options_.use_ssh_config && ssh_options_parse_config(session, config_file) < 0) {
    return ConfigError(ssh_get_error(session));
  }
  // Explicit values are set after the config so that they win (libssh 0.10
  // lets a parsed config override earlier ones). With a config, port 22 is
  // the inventory's default and is left to the config.
  if (!options_.use_ssh_config || options_.port != 22) {
    unsigned int port = static_cast<unsigned int>(options_.port);
    ssh_options_set(session, SSH_OPTIONS_PORT, &port);
  }
  if (!options_.user.empty()) {
    ssh_options_set(session, SSH_OPTIONS_USER, options_.user.c_str());
  }
  ssh_options_set(session, SSH_OPTIONS_GLOBAL_KNOWNHOSTS, "/dev/null");
  int one = 1;
  ssh_options_set(session, SSH_OPTIONS_NODELAY, &one);
  state->callbacks.userdata = nullptr;
  state->callbacks.auth_function = RefusePrompt;
  ssh_callbacks_init(&state->callbacks);
  ssh_set_callbacks(session, &state->callbacks);

  // The host and port after the config (HostName, Port) and our options.
  target_host_ = options_.address;
  target_port_ = options_.port;
  login_user_ = SessionTokens(session, target_host_, options_.address, target_port_).user;
  std::string proxy;  // a ProxyCommand, or the one libssh made of a ProxyJump
  if (options_.use_ssh_config) {
    char* value = nullptr;
    if (ssh_options_get(session, SSH_OPTIONS_HOST, &value) == SSH_OK) {
      target_host_ = value;
      ssh_string_free_char(value);
    }
    unsigned int port = 0;
    if (ssh_options_get_port(session, &port) == SSH_OK) target_port_ = static_cast<int>(port);
    if (ssh_options_get(session, SSH_OPTIONS_PROXYCOMMAND, &value) == SSH_OK) {
      if (value != nullptr && std::string(value) != "none") proxy = value;
      ssh_string_free_char(value);
      // Ours to run: libssh must neither run nor expand it (it knows no %n).
      if (!proxy.empty()) ssh_options_set(session, SSH_OPTIONS_PROXYCOMMAND, "none");
    }
  }
  Status prepared = PrepareKnownHosts(state.get());
  if (!prepared.ok()) return prepared;
  // A ProxyJump is ours (one connection per bastion), unless a ProxyCommand
  // came first in the config, as OpenSSH has it.
  std::string jump = options_.proxy_jump;
  if (jump.empty() && options_.use_ssh_config) jump = config_.proxy_jump;
  if (jump == "none") jump.clear();
  if (!jump.empty()) proxy.clear();
  direct_ = jump.empty() && proxy.empty();
  // Every way, libssh gets a socket that has already carried the banner, so
  // every wait up to here was bounded by our deadline.
  // The bastion's session and the proxy's pacer take locks across their
  // waits: in a fiber they run on a thread of their own while the fiber
  // waits (RunOffLoop), and only the TCP dial waits as a fiber.
  Status dialed = Status::Ok();
  if (!jump.empty()) {
    RunOffLoop([&] { dialed = StartJump(jump, state.get(), deadline, where); });
  } else if (!proxy.empty()) {
    RunOffLoop([&] { dialed = StartProxy(proxy, state.get(), not_after, &deadline, where); });
  } else {
    dialed = DialTcp(target_host_, target_port_, deadline, &state->fd);
  }
  if (!dialed.ok()) {
    const bool named =
        options_.name.empty() || !proxy.empty() || !jump.empty() || options_.name == target_host_;
    return Status::Error(dialed.kind(),
                         named ? dialed.message() : options_.name + ": " + dialed.message());
  }
  int fd = proxy.empty() ? state->fd : state->proxy.fd();
  ssh_options_set(session, SSH_OPTIONS_FD, &fd);
  state->fd_handed = proxy.empty();
  SetSessionTimeout(session, std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  state->nonblocking = InFiber();
  if (state->nonblocking) ssh_set_blocking(session, 0);
  const int connected = RetryAgain(session, state->nonblocking, SSH_AGAIN, deadline,
                                   [session] { return ssh_connect(session); });
  if (connected == SSH_AGAIN) {
    return ClassifyConnectError("Timeout", where, budget);
  }
  if (connected != SSH_OK) {
    return ClassifyConnectError(ssh_get_error(session), where, budget);
  }
  if (state->known_hosts_fd >= 0) {
    // Read in the key exchange only: one descriptor less per host in flight.
    ssh_options_set(session, SSH_OPTIONS_KNOWNHOSTS, "/dev/null");
    close(state->known_hosts_fd);
    state->known_hosts_fd = -1;
  }
  session_ = std::move(state);
  Status status = VerifyHostKey();
  if (status.ok()) status = Authenticate(deadline);
  if (!status.ok()) {
    Close();
    return status;
  }
  // Later blocking calls (opening a channel) wait at most this long.
  SetSessionTimeout(session, options_.connect_timeout);
  return Status::Ok();
}

Status SshTransport::ConfigError(std::string error) const {
  // libssh 0.10 says nothing when it refuses a ProxyJump: find it ourselves.
  if (error.empty()) {
    SshConfigValues values;
    std::vector<JumpHop> hops;
    if (LookUpSshConfig(SshConfigFiles(options_.ssh_config_file), options_.address,
                        SshHomeDirectory(), &values)
            .ok() &&
        !values.proxy_jump.empty() && values.proxy_jump != "none") {
      Status jump = ParseProxyJump(values.proxy_jump, &hops);
      if (!jump.ok()) error = jump.message();
    }
    if (error.empty()) error = "libssh refused a value in it for this host";
  }
  return Status::Error(ErrorKind::kInvalidInput,
                       "ssh config " +
                           (options_.ssh_config_file.empty() ? std::string("~/.ssh/config")
                                                             : options_.ssh_config_file) +
                           ": " + error);
}

std::string SshTransport::Destination() const {
  std::string user = login_user_.empty() ? LocalAccount().name : login_user_;
  const bool v6 = target_host_.find(':') != std::string::npos;
  return user + "@" + (v6 ? "[" + target_host_ + "]" : target_host_) + ":" +
         std::to_string(target_port_);
}

Status SshTransport::StartProxy(const std::string& proxy, Session* state,
                                Clock::time_point not_after, Clock::time_point* deadline_io,
                                const std::string& where) {
  Clock::time_point& deadline = *deadline_io;
  const ProxyTokens tokens =
      SessionTokens(state->session, target_host_, options_.address, target_port_);
  std::string command;
  Status status = ExpandProxyCommand(proxy, tokens, &command);
  if (!status.ok()) return Status::Error(status.kind(), where + ": " + status.message());
  std::random_device seed;
  std::minstd_rand jitter(seed());
  for (int attempt = 1;; ++attempt) {
    ProxyPacer::Slot slot;  // held until the banner came through: the proxy logged in
    if (options_.proxy_pacer != nullptr) {
      // The wait for a turn is ours, not the host's: it moves the connect
      // timeout's end, bounded by "not_after" and ten connect timeouts.
      const Clock::time_point queued = Clock::now();
      const Clock::time_point turn_by = queued + 10 * options_.connect_timeout < not_after
                                            ? queued + 10 * options_.connect_timeout
                                            : not_after;
      if (!options_.proxy_pacer->Acquire(proxy, turn_by, &slot)) {
        return Status::Error(ErrorKind::kConnectTimeout,
                             where + ": no turn among the " + std::to_string(kProxyStartups) +
                                 " proxies of its ProxyCommand in time");
      }
      deadline = std::min(not_after, deadline + (Clock::now() - queued));
    }
    status = state->proxy.Start(command);
    if (!status.ok()) return status;
    status = state->proxy.AwaitBanner(deadline, where);
    if (status.ok() || attempt >= kProxyAttempts || !IsStartupDrop(state->proxy.StderrTail())) {
      return status;
    }
    state->proxy.Stop();
    slot.Release();
    const milliseconds pause = ProxyRetryPause(attempt, static_cast<uint32_t>(jitter()));
    if (Clock::now() + pause >= deadline) return status;
    SleepUntil(Clock::now() + pause);
  }
}

Status SshTransport::StartJump(const std::string& jump, Session* state, Clock::time_point deadline,
                               const std::string& where) {
  std::vector<JumpHop> hops;
  Status status = ParseProxyJump(jump, &hops);
  if (!status.ok()) return Status::Error(status.kind(), where + ": " + status.message());
  // The last hop is the bastion; the ones before it are its own ProxyJump,
  // as OpenSSH's "ssh -J first,...,last" has it.
  SshTransportOptions bastion = options_;
  bastion.name = hops.back().host;
  bastion.address = hops.back().host;
  bastion.port = hops.back().port == 0 ? 22 : hops.back().port;
  bastion.user = hops.back().user;
  bastion.proxy_jump.clear();
  for (size_t i = 0; i + 1 < hops.size(); ++i) {
    const JumpHop& hop = hops[i];
    const bool v6 = hop.host.find(':') != std::string::npos;
    bastion.proxy_jump += (i == 0 ? "" : ",") + (hop.user.empty() ? "" : hop.user + "@") +
                          (v6 ? "[" + hop.host + "]" : hop.host) +
                          (hop.port == 0 ? "" : ":" + std::to_string(hop.port));
  }
  if (options_.jumps == nullptr) options_.jumps = std::make_shared<SshJumps>();
  status = options_.jumps->Open(bastion, target_host_, target_port_, deadline, &state->fd);
  if (!status.ok()) return Status::Error(status.kind(), where + ": " + status.message());
  int error = 0;
  switch (AwaitFirstByte(state->fd, deadline, &error)) {
    case FirstByte::kArrived: return Status::Ok();
    case FirstByte::kTimedOut:
      return Status::Error(ErrorKind::kBannerTimeout, where + ": connected through bastion " +
                                                          bastion.name +
                                                          " but no SSH banner came in time");
    case FirstByte::kClosed: break;
  }
  return Status::Error(ErrorKind::kConnectionLost,
                       where + ": closed through bastion " + bastion.name +
                           " before its SSH banner" +
                           (error != 0 ? std::string(": ") + std::strerror(error) : ""));
}

}  // namespace fleetreap
