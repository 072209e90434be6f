// SshJumps: the ProxyJump bastions of one run. Hosts that name the same
// bastion (the same user, address, port, keys, host key settings and jump
// chain) share one authenticated libssh connection to it, opened on first
// use; each host's own SSH session then runs over a direct-tcpip channel of
// that connection, handed to the host's libssh session as one end of a
// socketpair. libssh 0.10 has no ProxyJump of its own: it would run an
// "ssh -W" per host, one bastion login each, reading ~/.ssh/config whatever
// file fleetreap was given.
//
// One pump thread per bastion (ssh_jump_pump.h) owns its session, since
// libssh sessions are not thread-safe: it connects (bounded by the connect
// timeout; the bastion's host key is judged like any host's), opens the
// channels and moves the bytes. A bastion is closed when its last channel has
// ended and no host has asked for it for a moment, and when the SshJumps is
// destroyed, which must happen after every session over it has closed (each
// SshTransport holds a shared_ptr). Thread-safe: any number of SshTransports
// call Open at once.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

struct SshTransportOptions;
class JumpPump;

/// One hop of a ProxyJump: "[user@]host[:port]". port 0: the config's, or 22.
struct JumpHop {
  std::string user;
  std::string host;
  int port = 0;
};

/// Parses a ProxyJump value, a comma-separated list of [user@]host[:port] or
/// ssh://[user@]host[:port] (an IPv6 host in brackets), first hop first.
/// Errors: kInvalidInput naming the value and the problem (an empty hop or
/// host, a bad port, a host a shell or ssh could read as more than a name).
Status ParseProxyJump(const std::string& text, std::vector<JumpHop>* hops);

/// Sorts libssh's message for a channel the bastion would not open
/// ("Channel opening failure: channel 3 error (2) Connection refused") into
/// a connection error kind (kRefused, kDns, kConnectTimeout; kConnectionLost
/// otherwise), and gives in "*reason" the bastion's own words, explained
/// when the code says forwarding is prohibited there.
ErrorKind ClassifyChannelOpenFailure(const std::string& error, std::string* reason);

class SshJumps {
 public:
  SshJumps();
  /// Ends every bastion connection (and the channels still on them).
  ~SshJumps();
  SshJumps(const SshJumps&) = delete;
  SshJumps& operator=(const SshJumps&) = delete;

  /// Opens a channel to "host":"port" through the bastion that "bastion"
  /// describes (an SshTransport's options; its proxy_jump is its own chain),
  /// connecting to the bastion first when no connection to it is open. On
  /// success "*fd" is the caller's end of a socketpair carrying the channel
  /// (the caller owns it; closing it ends the channel). Waits at most until
  /// "deadline". Errors name the bastion, "bastion NAME (user@address:port):
  /// ...": the bastion's own Connect error and kind (kRefused, kDns,
  /// kConnectTimeout, kHostKey, kAuth...), kRefused/kDns/kConnectTimeout
  /// when the bastion could not reach the target, kConnectTimeout when the
  /// channel did not open by the deadline, kConnectionLost when the
  /// bastion's connection ended.
  Status Open(const SshTransportOptions& bastion, const std::string& host, int port,
              std::chrono::steady_clock::time_point deadline, int* fd);

  /// How long an idle bastion connection stays open for the next host.
  static constexpr std::chrono::milliseconds kLinger{2000};

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<JumpPump>> pumps_;  // by bastion identity
  std::vector<std::shared_ptr<JumpPump>> retired_;          // closed, joined at the end
  bool closing_ = false;                                    // the destructor has begun
};

}  // namespace fleetreap
