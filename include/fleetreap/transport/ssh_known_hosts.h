// SshKnownHosts: the known_hosts files as fleetreap reads and writes them. It
// finds the lines that name a host (plain or hashed entries) in every file
// OpenSSH would read, judges an offered key against all of them, so that a
// changed key is refused and reported with the file and line that disagree,
// and it appends new entries for --host-key-policy accept-new safely while
// many sessions, threads or fleetreap processes write at once (one whole line
// per write with O_APPEND, under flock). No libssh type appears here.
// Free functions; thread-safe.
#pragma once

#include <string>
#include <vector>

#include "fleetreap/base/status.h"

namespace fleetreap {

/// The name a host has in known_hosts: "addr" on port 22, "[addr]:port" else.
std::string KnownHostsName(const std::string& address, int port);

struct KnownHostsLine {
  int line = 0;             // 1-based line number in the file
  std::string key;          // "ssh-ed25519 AAAAC3..." (type, space, base64)
  std::string fingerprint;  // "SHA256:..."
};

/// Fills "*lines" with every entry of "path" that names "host_name" (from
/// KnownHostsName, or a HostKeyAlias), plain or hashed (|1|salt|hash), in
/// file order; with "revoked", the @revoked entries that concern it go there.
/// Other marker lines (@cert-authority) and malformed lines are skipped. The
/// file is read once per process and again only when it changes (size,
/// mtime or inode), and only the lines that could name the host are parsed,
/// so a fleet-sized file costs little per host. A missing file gives no
/// lines and Ok; an unreadable one gives kInternal.
Status FindKnownHostsLines(const std::string& path, const std::string& host_name,
                           std::vector<KnownHostsLine>* lines,
                           std::vector<KnownHostsLine>* revoked = nullptr);

/// One entry for a host, and the file it is in.
struct KnownHostsRecord {
  std::string file;
  KnownHostsLine line;
  bool revoked = false;  // a @revoked entry
};

/// Every entry (revoked ones included) that "files" hold for "host_name", as
/// OpenSSH reads them: the user's files, then the global ones. Errors as
/// FindKnownHostsLines.
Status ReadKnownHosts(const std::vector<std::string>& files, const std::string& host_name,
                      std::vector<KnownHostsRecord>* records);

/// What the records say about an offered "key" ("type base64").
struct KnownHostsVerdict {
  enum class Kind {
    kUnknown,  // no entry for the host
    kKnown,    // an entry records this key
    kChanged,  // entries record the host, none with this key
    kRevoked,  // a @revoked entry names this key: refused whatever else
  };
  Kind kind = Kind::kUnknown;
  std::string where;        // "FILE:LINE" of the deciding entry
  std::string fingerprint;  // the key recorded there
};

/// A key that any entry contradicts (another key of the same type for the
/// host, in any file, even where another file has this key) has CHANGED, as
/// has a host recorded only with keys of other types; otherwise a key
/// recorded anywhere is known. A @revoked key is refused before all that.
KnownHostsVerdict JudgeHostKey(const std::vector<KnownHostsRecord>& records,
                               const std::string& key);

/// "SHA256:..." for a public key written as "type base64"; "" if malformed.
std::string KeyFingerprint(const std::string& key);

/// Records "host_name" with "key" ("type base64") in "path" for accept-new:
/// under a process-wide mutex and an exclusive flock it looks again, appends
/// "host_name key" as one line unless the same key is already recorded, and
/// creates the file (mode 0600) when missing, and its directory (0700, one
/// level, as ssh creates ~/.ssh) when that is missing. "*appended" (if
/// given) says whether a line was written. If another writer recorded a
/// different key for the host meanwhile, the result is kHostKey naming the
/// file and line; I/O failures are kInternal.
Status AppendKnownHostsEntry(const std::string& path, const std::string& host_name,
                             const std::string& key, bool* appended = nullptr);

/// Creates the directory of known_hosts file "path" (0700) when it is
/// missing and its own parent is there, as ssh creates ~/.ssh; Ok when it
/// exists. kInternal names the directory and the system error.
Status EnsureKnownHostsDirectory(const std::string& path);

/// Before any host is reached: the user known_hosts file a run reads
/// ("known_hosts", --known-hosts; "" for ~/.ssh/known_hosts) is usable, so
/// a bad one costs one line, not a failure on every host. kUsage:
///   --known-hosts nodir/sub/kh: no such directory nodir/sub
///   --known-hosts kh: is a directory
///   --known-hosts kh: cannot read it: Permission denied
///   --known-hosts kh: cannot record new host keys there (--host-key-policy accept-new): ...
/// With "accept_new" and the default path, a missing ~/.ssh is created 0700
/// as OpenSSH does, and "*created" (if given) names it; without, a missing
/// ~/.ssh is fine (each host's refusal names the files it read).
Status CheckKnownHostsFile(const std::string& known_hosts, bool accept_new,
                           std::string* created = nullptr);

}  // namespace fleetreap
