// SshKnownHosts: the known_hosts file as fleetreap reads and writes it. It
// finds the lines that name a host (plain or hashed entries), so that a
// changed key can be reported with the file and line that disagree, and it
// appends new entries for --host-key-policy accept-new safely while many
// sessions, threads or fleetreap processes write at once (one whole line per
// write with O_APPEND, under flock). No libssh type appears here.
// Free functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/status.h"

namespace fleetreap {

/// The name a host has in known_hosts: "addr" on port 22, "[addr]:port" else.
std::string KnownHostsName(const std::string& address, int port);

struct KnownHostsLine {
  int line = 0;             // 1-based line number in the file
  std::string key;          // "ssh-ed25519 AAAAC3..." (type, space, base64)
  std::string fingerprint;  // "SHA256:..."
};

/// Fills "*lines" with every entry of "path" that names "host_name" (from
/// KnownHostsName), plain or hashed (|1|salt|hash), in file order. Lines with
/// a marker (@cert-authority, @revoked) and malformed lines are skipped. A
/// missing file gives no lines and Ok; an unreadable one gives kInternal.
Status FindKnownHostsLines(const std::string& path, const std::string& host_name,
                           std::vector<KnownHostsLine>* lines);

/// The lines of known_hosts "path" that libssh could match for "host_name"
/// (from KnownHostsName), in file order, each ending in a newline: entries
/// that name it (case aside), and every hashed, pattern or marker line, which
/// only libssh can judge. Comments, blank lines and entries that name only
/// other hosts are left out, so that libssh, which reads its known_hosts file
/// twice per connection, reads a few lines instead of the whole fleet's. The
/// file is read once per process and again only when it changes (size, mtime
/// or inode). Returns false, leaving "*text" alone, when the file cannot be
/// read (missing included): the caller then gives libssh the file itself.
bool KnownHostsSlice(const std::string& path, const std::string& host_name,
                     std::string* text);

/// "SHA256:..." for a public key written as "type base64"; "" if malformed.
std::string KeyFingerprint(const std::string& key);

/// Records "host_name" with "key" ("type base64") in "path" for accept-new:
/// under a process-wide mutex and an exclusive flock it looks again, appends
/// "host_name key" as one line unless the same key is already recorded, and
/// creates the file (mode 0600) when missing. If another writer recorded a
/// different key for the host meanwhile, the result is kHostKey naming the
/// file and line; I/O failures are kInternal.
Status AppendKnownHostsEntry(const std::string& path, const std::string& host_name,
                             const std::string& key);

}  // namespace fleetreap
