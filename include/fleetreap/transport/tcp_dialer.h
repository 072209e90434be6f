// TcpDialer: opens the TCP connection an SSH session runs over, with every
// wait bounded by one deadline, and tells apart the ways it can fail: the name
// does not resolve (or resolving outlives the deadline), nothing listens, the
// connect times out, or something listens but never says its SSH banner.
// libssh's own connect cannot bound name resolution nor tell a silent
// listener from a failed key exchange, so SshTransport dials here first and
// hands the socket over. Free functions; thread-safe.
#pragma once

#include <chrono>
#include <string>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// Resolves "address" and connects to "port", trying each resolved address in
/// turn, then waits until the peer has sent its first bytes (an SSH server
/// speaks first). On success "*fd" is a connected non-blocking socket with the
/// banner unread; the caller owns it. Errors: kDns (no such name, or the
/// resolver did not answer before "deadline"), kRefused, kConnectTimeout (no
/// answer, no route), kBannerTimeout (connected, nothing received before
/// "deadline"), kConnectionLost (closed by the peer before any byte).
Status DialTcp(const std::string& address, int port, std::chrono::steady_clock::time_point deadline,
               int* fd);

/// How a wait for a peer's first byte ended.
enum class FirstByte { kArrived, kTimedOut, kClosed };

/// Waits until "fd" has a byte to read (left unread: an SSH server's banner)
/// or "deadline" passes. kClosed when the peer closed first; "*error" is then
/// the errno of the read, or 0 for an orderly close. Used for direct
/// connections and for ProxyCommand sockets alike.
FirstByte AwaitFirstByte(int fd, std::chrono::steady_clock::time_point deadline, int* error);

}  // namespace fleetreap
