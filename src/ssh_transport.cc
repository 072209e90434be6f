#include "fleetreap/ssh_transport.h"

#include <pwd.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>

#include <utility>

#include "fleetreap/ssh_known_hosts.h"
#include "fleetreap/tcp_dialer.h"
#include "fleetreap/text.h"
#include "ssh_transport_session.h"

namespace fleetreap {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Never ask anyone for anything: libssh calls this for passphrases.
int RefusePrompt(const char*, char*, size_t, int, int, void*) { return -1; }

std::string HomeDirectory() {
  // libssh takes ~ from the passwd entry, not $HOME; do the same.
  const passwd* entry = getpwuid(getuid());
  if (entry != nullptr && entry->pw_dir != nullptr) return entry->pw_dir;
  const char* home = getenv("HOME");
  return home != nullptr ? home : "/";
}

// Sorts what ssh_connect() said into our kinds. Our socket (or proxy) has
// already seen the banner, so resolution and TCP cannot be the cause.
Status ClassifyConnectError(const std::string& error, const std::string& where,
                            milliseconds timeout) {
  if (Contains(error, "Timeout") || Contains(error, "timeout")) {
    return Status::Error(
        ErrorKind::kConnectTimeout,
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
    return Status::Error(ErrorKind::kKex,
                         where + ": key exchange failed: the server closed the "
                                 "connection during key exchange (no algorithm in "
                                 "common?): " + error);
  }
  return Status::Error(ErrorKind::kKex, where + ": key exchange failed: " + error);
}

void SetTimeout(ssh_session session, milliseconds timeout) {
  if (timeout.count() < 1) timeout = milliseconds(1);
  long seconds = static_cast<long>(timeout.count() / 1000);
  long micros = static_cast<long>(timeout.count() % 1000) * 1000;
  ssh_options_set(session, SSH_OPTIONS_TIMEOUT, &seconds);
  ssh_options_set(session, SSH_OPTIONS_TIMEOUT_USEC, &micros);
}

}  // namespace

SshTransportOptions SshOptionsFor(const Host& host, const Options& options) {
  SshTransportOptions ssh;
  ssh.name = host.name;
  ssh.address = host.address.empty() ? host.name : host.address;
  ssh.port = host.port;
  ssh.user = host.user.empty() ? options.user : host.user;
  if (!host.identity_file.empty()) ssh.identity_files.push_back(host.identity_file);
  if (!options.identity.empty() && options.identity != host.identity_file) {
    ssh.identity_files.push_back(options.identity);
  }
  ssh.known_hosts = options.known_hosts;
  ssh.host_key_policy = options.host_key_policy;
  ssh.connect_timeout = options.connect_timeout;
  ssh.use_ssh_config = options.ssh_config || !options.ssh_config_file.empty();
  ssh.ssh_config_file = options.ssh_config_file;
  return ssh;
}

SshTransport::SshTransport(SshTransportOptions options)
    : options_(std::move(options)) {
  if (options_.known_hosts.empty()) {
    options_.known_hosts = HomeDirectory() + "/.ssh/known_hosts";
  }
}

SshTransport::~SshTransport() = default;

void SshTransport::Close() { session_.reset(); }

std::string SshTransport::Describe() const {
  std::string user = options_.user;
  if (user.empty()) {
    const passwd* entry = getpwuid(getuid());
    if (entry != nullptr) user = entry->pw_name;
  }
  const bool v6 = options_.address.find(':') != std::string::npos;
  return user + "@" + (v6 ? "[" + options_.address + "]" : options_.address) + ":" +
         std::to_string(options_.port);
}

Status SshTransport::Connect(Clock::time_point not_after) {
  Close();
  fingerprint_.clear();
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline =
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
    return Status::Error(ErrorKind::kInvalidInput,
                         "ssh config: " + std::string(ssh_get_error(session)));
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
  const std::string known_hosts = KnownHostsFileForLibssh(state.get());
  ssh_options_set(session, SSH_OPTIONS_KNOWNHOSTS, known_hosts.c_str());
  // Either way libssh gets a socket that has already carried the banner, so
  // every wait up to here was bounded by our deadline.
  Status dialed = proxy.empty() ? DialTcp(target_host_, target_port_, deadline, &state->fd)
                                : StartProxy(proxy, state.get(), deadline, where);
  if (!dialed.ok()) {
    return Status::Error(dialed.kind(),
                         options_.name.empty() || !proxy.empty() ||
                                 options_.name == target_host_
                             ? dialed.message()
                             : options_.name + ": " + dialed.message());
  }
  int fd = proxy.empty() ? state->fd : state->proxy.fd();
  ssh_options_set(session, SSH_OPTIONS_FD, &fd);
  SetTimeout(session, std::chrono::duration_cast<milliseconds>(deadline - Clock::now()));
  if (ssh_connect(session) != SSH_OK) {
    return ClassifyConnectError(ssh_get_error(session), where, budget);
  }
  session_ = std::move(state);
  Status status = VerifyHostKey();
  if (status.ok()) status = Authenticate();
  if (!status.ok()) {
    Close();
    return status;
  }
  // Later blocking calls (opening a channel) wait at most this long.
  SetTimeout(session, options_.connect_timeout);
  return Status::Ok();
}

Status SshTransport::StartProxy(const std::string& proxy, Session* state,
                                Clock::time_point deadline, const std::string& where) {
  ProxyTokens tokens;
  tokens.host = target_host_;
  tokens.original_host = options_.address;
  tokens.port = target_port_;
  char* user = nullptr;
  if (ssh_options_get(state->session, SSH_OPTIONS_USER, &user) == SSH_OK) {
    tokens.user = user;
    ssh_string_free_char(user);
  }
  const passwd* entry = getpwuid(getuid());
  tokens.local_user = entry != nullptr && entry->pw_name != nullptr ? entry->pw_name : "";
  std::string command;
  Status status = ExpandProxyCommand(proxy, tokens, &command);
  if (!status.ok()) return Status::Error(status.kind(), where + ": " + status.message());
  status = state->proxy.Start(command);
  if (!status.ok()) return status;
  return state->proxy.AwaitBanner(deadline, where);
}

std::string SshTransport::KnownHostsFileForLibssh(Session* state) const {
  std::string slice;
  if (!KnownHostsSlice(options_.known_hosts, KnownHostsName(target_host_, target_port_),
                       &slice)) {
    return options_.known_hosts;
  }
  int fd = memfd_create("known_hosts", MFD_CLOEXEC);
  if (fd < 0) return options_.known_hosts;
  state->known_hosts_fd = fd;
  size_t done = 0;
  while (done < slice.size()) {
    ssize_t n = write(fd, slice.data() + done, slice.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return options_.known_hosts;
    done += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  return access(path.c_str(), R_OK) == 0 ? path : options_.known_hosts;
}

Status SshTransport::VerifyHostKey() {
  ssh_session session = session_->session;
  ssh_key server_key = nullptr;
  if (ssh_get_server_publickey(session, &server_key) != SSH_OK) {
    return Status::Error(ErrorKind::kKex, options_.address + ": no server host key");
  }
  char* base64 = nullptr;
  std::string key;
  if (ssh_pki_export_pubkey_base64(server_key, &base64) == SSH_OK) {
    key = std::string(ssh_key_type_to_char(ssh_key_type(server_key))) + " " + base64;
    ssh_string_free_char(base64);
  }
  ssh_key_free(server_key);
  fingerprint_ = KeyFingerprint(key);
  if (options_.host_key_policy == HostKeyPolicy::kOff) return Status::Ok();

  const std::string name = KnownHostsName(target_host_, target_port_);
  const std::string who =
      (options_.name.empty() ? target_host_ : options_.name) + " (" + name + ")";
  const std::string& path = options_.known_hosts;
  switch (ssh_session_is_known_server(session)) {
    case SSH_KNOWN_HOSTS_OK:
      return Status::Ok();
    case SSH_KNOWN_HOSTS_CHANGED:
    case SSH_KNOWN_HOSTS_OTHER: {
      std::vector<KnownHostsLine> lines;
      FindKnownHostsLines(path, name, &lines);
      std::string recorded = path;
      if (!lines.empty()) {
        recorded += ":" + std::to_string(lines.front().line) + " has " +
                    lines.front().fingerprint;
      }
      return Status::Error(ErrorKind::kHostKey,
                           "host key for " + who + " has CHANGED: offered " + fingerprint_ +
                               ", known_hosts " + recorded + "; refusing to connect");
    }
    case SSH_KNOWN_HOSTS_UNKNOWN:
    case SSH_KNOWN_HOSTS_NOT_FOUND:
      if (options_.host_key_policy == HostKeyPolicy::kAcceptNew) {
        return AppendKnownHostsEntry(path, name, key);
      }
      return Status::Error(ErrorKind::kHostKey,
                           "host key for " + who + " is not in known_hosts " + path +
                               " (offered " + fingerprint_ +
                               "); add it, or use --host-key-policy accept-new");
    case SSH_KNOWN_HOSTS_ERROR:
    default:
      return Status::Error(ErrorKind::kHostKey, "cannot check the host key of " + who +
                                                    ": " + ssh_get_error(session));
  }
}

}  // namespace fleetreap
