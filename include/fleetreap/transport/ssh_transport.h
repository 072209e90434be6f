// SshTransport: the Transport that reaches a host over SSH with libssh. One
// connection per host for the whole run, one channel per command. It never
// prompts: host keys are checked against the known_hosts files by policy, and
// authentication uses only keys (explicit identities, ssh-agent, the default
// keys in ~/.ssh). Every failure is classified into the ErrorKinds of
// status.h where libssh reports it, and nowhere else.
// Only src/transport/ssh_transport*.cc and ssh_known_hosts.cc include libssh.
// Like every Transport it is used by one thread at a time; not thread-safe.
// Different SshTransports may live in different threads at once.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "fleetreap/transport/command_output.h"
#include "fleetreap/transport/host_key_policy.h"
#include "fleetreap/transport/ssh_config_lookup.h"
#include "fleetreap/transport/ssh_known_hosts.h"
#include "fleetreap/transport/transport.h"

namespace fleetreap {

class SshJumps;    // ssh_jump.h
class ProxyPacer;  // proxy_pacer.h

struct SshTransportOptions {
  std::string name;     // inventory name, for messages ("gpu07")
  std::string address;  // what to connect to (ansible_host)
  int port = 22;
  std::string user;                         // "" means the local user
  std::vector<std::string> identity_files;  // tried first, in order
  bool use_default_keys = true;             // then ~/.ssh/id_ed25519, id_ecdsa, id_rsa
  /// And ssh-agent: $SSH_AUTH_SOCK, or the config's IdentityAgent. Every
  /// exchange with it ends by the connect deadline (ssh_agent_socket.h).
  bool use_agent = true;
  /// The user's known_hosts file, the only one accept-new writes to. ""
  /// means the config's UserKnownHostsFile (with use_ssh_config), else
  /// ~/.ssh/known_hosts and ~/.ssh/known_hosts2 (new keys go to the first).
  std::string known_hosts;
  /// Read too, never written; the config's GlobalKnownHostsFile replaces them.
  std::vector<std::string> global_known_hosts{"/etc/ssh/ssh_known_hosts",
                                              "/etc/ssh/ssh_known_hosts2"};
  HostKeyPolicy host_key_policy = HostKeyPolicy::kStrict;
  std::chrono::milliseconds connect_timeout{10000};
  /// Read OpenSSH config (HostName, User, Port, IdentityFile, ProxyJump,
  /// ProxyCommand; HostKeyAlias, UserKnownHostsFile, GlobalKnownHostsFile,
  /// IdentityAgent and which of ProxyJump and ProxyCommand comes first
  /// through ssh_config_lookup.h) before the explicit values, which win. A
  /// ProxyJump goes through "jumps" (ssh_jump.h): one connection per bastion,
  /// a forwarded channel per host. A ProxyCommand is run by fleetreap
  /// (proxy_command.h), bounded by the connect timeout like a direct
  /// connection and paced by "proxy_pacer"; a proxy that says nothing reads
  /// as connect_timeout, since the TCP connect happens beyond it.
  bool use_ssh_config = false;
  /// The config file for use_ssh_config; "" means ~/.ssh/config (from the
  /// passwd entry, not $HOME) and the system-wide ssh_config.
  std::string ssh_config_file;
  OutputLimits output_limits;  // per command; past them it is stopped
  /// Extra time the controller waits past a command's timeout for the remote
  /// "timeout -k" to end it before giving up on the channel.
  std::chrono::milliseconds command_grace{5000};
  /// The ProxyJump to use instead of the config's ("" : the config's), as
  /// OpenSSH's "ssh -J": set for the bastions of a jump chain.
  std::string proxy_jump;
  /// Shared by the transports of one run, so that hosts behind the same
  /// bastion share its connection and their proxies' pacing. Null: this
  /// transport keeps its own (one bastion login per host, no pacing).
  std::shared_ptr<SshJumps> jumps;
  std::shared_ptr<ProxyPacer> proxy_pacer;
};

class SshTransport : public Transport {
 public:
  explicit SshTransport(SshTransportOptions options);
  ~SshTransport() override;
  SshTransport(const SshTransport&) = delete;
  SshTransport& operator=(const SshTransport&) = delete;

  /// TCP (with bounded name resolution), SSH banner, key exchange, host key,
  /// authentication, all within connect_timeout. The host key is judged
  /// against every known_hosts file OpenSSH would read (the user's, the
  /// global ones, the config's, under its HostKeyAlias); accept-new appends
  /// only a key no file knows, and only to the user's file. Errors: kDns,
  /// kRefused, kConnectTimeout, kBannerTimeout, kKex, kHostKey (unknown under
  /// strict; changed or @revoked in any file under any policy but off, naming
  /// the host, the offered SHA256 fingerprint and the file:line), kAuth
  /// (including an encrypted identity with no agent, and an agent that did
  /// not answer by the deadline), kConnectionLost. A second call after
  /// a failure starts from scratch. An earlier "not_after" shortens the
  /// whole attempt, and the timeout messages name the shorter bound.
  Status Connect(std::chrono::steady_clock::time_point not_after) override;

  /// Opens a channel and execs "command" as given (callers bound it on the
  /// remote side with BoundedCommand). Stdout and stderr are drained together
  /// as they arrive, each up to its output_limits. Ends as kExited, kSignaled
  /// (exit-signal), kTimedOut (no end within "timeout" plus command_grace;
  /// the channel is then abandoned), kOutputLimit (a stream went past its
  /// limit: the channel is closed at once, so the command's next write
  /// fails), kNoStatus (the channel closed, the session alive, without an
  /// exit status or signal), kConnectionLost (the session died), or
  /// kNotStarted (not connected, channel refused).
  CommandResult Run(const std::string& command, std::chrono::milliseconds timeout) override;

  void Close() override;

  /// "root@10.0.0.7:22"
  std::string Describe() const override;

  /// The server's "SHA256:..." fingerprint once key exchange is done.
  std::string HostKeyFingerprint() const override { return fingerprint_; }
  std::string HostKeyType() const override { return key_type_; }
  std::string HostKeyAcceptedInto() const override { return accepted_into_; }

 private:
  struct Session;         // the libssh handles; defined in ssh_transport_session.h
  friend class JumpPump;  // drives a connected bastion's session (ssh_jump_pump.cc)

  // Reads the config's host key settings and every known_hosts entry for the
  // target, and gives libssh (which uses it only to prefer the key types the
  // host is known by) a memfd owned by "state" with those keys.
  Status PrepareKnownHosts(Session* state);
  // Runs the config's ProxyCommand (ours, not libssh's, so it is bounded)
  // and waits for the banner through it. Its turn among the proxies of the
  // same command (proxy_pacer) is awaited until "not_after" (at most ten
  // connect timeouts), and that wait moves "*deadline" later by as much.
  Status StartProxy(const std::string& proxy, Session* state,
                    std::chrono::steady_clock::time_point not_after,
                    std::chrono::steady_clock::time_point* deadline, const std::string& where);
  // Opens the host's channel through the ProxyJump bastion "jump" (the last
  // hop; the ones before it are its own chain) and waits for the banner.
  Status StartJump(const std::string& jump, Session* state,
                   std::chrono::steady_clock::time_point deadline, const std::string& where);
  // "root@10.0.0.7:22" after the config: who and where this session logs in.
  std::string Destination() const;
  // kInvalidInput for a config libssh refused, naming the file and, when
  // libssh gave no reason, the ProxyJump it could not read.
  Status ConfigError(std::string error) const;
  Status VerifyHostKey();
  Status Authenticate(std::chrono::steady_clock::time_point deadline);

  SshTransportOptions options_;
  std::unique_ptr<Session> session_;
  std::string fingerprint_;
  std::string key_type_;       // "ED25519"
  std::string accepted_into_;  // the known_hosts file accept-new wrote to
  std::string target_host_;    // after ssh config: what known_hosts is keyed by
  int target_port_ = 22;
  bool direct_ = true;      // dialed without a bastion or proxy: ssh-keyscan reaches it too
  std::string login_user_;  // after ssh config
  SshConfigValues config_;  // what ssh_config_lookup found for this host
  std::vector<std::string> user_known_hosts_;  // accept-new writes to the first
  std::vector<std::string> global_known_hosts_;
  std::string known_hosts_name_;  // HostKeyAlias, or KnownHostsName(target)
  std::vector<KnownHostsRecord> known_records_;
};

}  // namespace fleetreap
