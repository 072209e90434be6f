// SshTransport: the Transport that reaches a host over SSH with libssh. One
// connection per host for the whole run, one channel per command. It never
// prompts: host keys are checked against a known_hosts file by policy, and
// authentication uses only keys (explicit identities, ssh-agent, the default
// keys in ~/.ssh). Every failure is classified into the ErrorKinds of
// status.h where libssh reports it, and nowhere else.
// Only src/ssh_transport*.cc and src/ssh_known_hosts.cc include libssh.
// Like every Transport it is used by one thread at a time; not thread-safe.
// Different SshTransports may live in different threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/host.h"
#include "fleetreap/options.h"
#include "fleetreap/transport.h"

namespace fleetreap {

struct SshTransportOptions {
  std::string name;                 // inventory name, for messages ("gpu07")
  std::string address;              // what to connect to (ansible_host)
  int port = 22;
  std::string user;                 // "" means the local user
  std::vector<std::string> identity_files;  // tried first, in order
  bool use_default_keys = true;     // then ~/.ssh/id_ed25519, id_ecdsa, id_rsa
  bool use_agent = true;            // and $SSH_AUTH_SOCK
  std::string known_hosts;          // "" means ~/.ssh/known_hosts
  HostKeyPolicy host_key_policy = HostKeyPolicy::kStrict;
  std::chrono::milliseconds connect_timeout{10000};
  /// Read OpenSSH config (HostName, User, Port, IdentityFile, ProxyJump,
  /// ProxyCommand) before the explicit values, which win. A ProxyCommand
  /// (and the "ssh -W" one libssh 0.10 makes of a ProxyJump) is run by
  /// fleetreap (proxy_command.h), bounded by the connect timeout like a direct
  /// connection; a proxy that says nothing reads as connect_timeout, since
  /// the TCP connect happens beyond it.
  bool use_ssh_config = false;
  /// The config file for use_ssh_config; "" means ~/.ssh/config (from the
  /// passwd entry, not $HOME) and the system-wide ssh_config.
  std::string ssh_config_file;
  size_t output_cap = 4 << 20;      // bytes kept of each stream per command
  /// Extra time the controller waits past a command's timeout for the remote
  /// "timeout -k" to end it before giving up on the channel.
  std::chrono::milliseconds command_grace{5000};
};

class SshTransport : public Transport {
 public:
  explicit SshTransport(SshTransportOptions options);
  ~SshTransport() override;
  SshTransport(const SshTransport&) = delete;
  SshTransport& operator=(const SshTransport&) = delete;

  /// TCP (with bounded name resolution), SSH banner, key exchange, host key,
  /// authentication, all within connect_timeout. Errors: kDns, kRefused,
  /// kConnectTimeout, kBannerTimeout, kKex, kHostKey (unknown under strict;
  /// changed under any policy but off, naming the host, the offered SHA256
  /// fingerprint and the known_hosts file:line), kAuth (including an
  /// encrypted identity with no agent), kConnectionLost. A second call after
  /// a failure starts from scratch. An earlier "not_after" shortens the
  /// whole attempt, and the timeout messages name the shorter bound.
  Status Connect(std::chrono::steady_clock::time_point not_after) override;

  /// Opens a channel and execs "command" as given (callers bound it on the
  /// remote side with BoundedCommand). Stdout and stderr are drained together
  /// as they arrive, whatever their size; each keeps output_cap bytes. Ends
  /// as kExited, kSignaled (exit-signal), kTimedOut (no end within "timeout"
  /// plus command_grace; the channel is then abandoned), kConnectionLost
  /// (the session died, or the channel closed without a status), or
  /// kNotStarted (not connected, channel refused).
  CommandResult Run(const std::string& command,
                    std::chrono::milliseconds timeout) override;

  void Close() override;

  /// "root@10.0.0.7:22"
  std::string Describe() const override;

  /// The server's "SHA256:..." fingerprint once key exchange is done.
  const std::string& host_key_fingerprint() const { return fingerprint_; }

 private:
  struct Session;  // the libssh handles; defined in ssh_transport.cc

  // The known_hosts path to give libssh: a memfd (under /proc/self/fd, owned
  // by "state") with only the lines that concern the target, or the file.
  std::string KnownHostsFileForLibssh(Session* state) const;
  // Runs the config's ProxyCommand (ours, not libssh's, so it is bounded)
  // and waits for the banner through it.
  Status StartProxy(const std::string& proxy, Session* state,
                    std::chrono::steady_clock::time_point deadline, const std::string& where);
  Status VerifyHostKey();
  Status Authenticate();

  SshTransportOptions options_;
  std::unique_ptr<Session> session_;
  std::string fingerprint_;
  std::string target_host_;  // after ssh config: what known_hosts is keyed by
  int target_port_ = 22;
};

/// The options for reaching "host" under the command line "options": the
/// inventory's user and key file win over --user and --identity (as in
/// Ansible), and both keys are tried when both are given.
SshTransportOptions SshOptionsFor(const Host& host, const Options& options);

}  // namespace fleetreap
