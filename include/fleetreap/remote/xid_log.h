// XidLog: the NVIDIA driver's Xid events in a kernel log, read from the
// text of /dev/kmsg (what the scan reads: "6,1234,5678901,-;NVRM: Xid ..."),
// of dmesg ("[  12.345678] NVRM: Xid ...") or of journalctl -k / syslog
// ("May 18 19:02:39 gpu01 kernel: NVRM: Xid ..."). Pure functions;
// thread-safe.
//
// An Xid line is "NVRM: Xid (PCI:DDDD:BB:DD): CODE, REST" (older drivers
// write the bus id without "PCI:"), and nothing but a timestamp or a syslog
// prefix may come before "NVRM:". The text after the code names a process
// that a user chose, so it is hostile: it is escaped and capped, never
// parsed, and an "NVRM: Xid" inside it is not an event. Lines that start
// like an Xid line but break its structure are counted as malformed, not
// trusted. /dev/kmsg escapes a record's control bytes itself ("\x0a"), so a
// process name cannot forge a line there; its sequence numbers also tell
// whether the ring buffer still starts at boot.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fleetreap/model/gpu_health.h"

namespace fleetreap {

/// Distinct (bus id, code) pairs kept; more are counted in XidLog::dropped.
constexpr size_t kMaxXidEvents = 64;
/// The longest Xid message kept, in bytes after escaping, before "...".
constexpr size_t kMaxXidMessage = 160;

struct XidLog {
  /// One entry per GPU and code, in the order first seen, with its count
  /// and its first line's message.
  std::vector<XidEvent> events;
  int lines = 0;      // lines read
  int malformed = 0;  // lines that began as an Xid line but did not parse
  int dropped = 0;    // Xid lines past kMaxXidEvents distinct pairs
  /// The first /dev/kmsg sequence number seen; nullopt for dmesg or journal
  /// text. A first record other than 0 means the ring buffer has wrapped
  /// since boot and older events are gone.
  std::optional<uint64_t> first_sequence;
};

/// Reads "text" (any of the three formats, mixed or not; CRLF or LF; a
/// missing final newline) into "*log". Never fails: a line that is not an
/// Xid line is skipped, a broken one counted.
void ParseXidLog(const std::string& text, XidLog* log);

}  // namespace fleetreap
