// ParseXidLog: Xid events out of kernel log text.
#include "fleetreap/remote/xid_log.h"

#include <cctype>
#include <cstdlib>

#include "fleetreap/base/text.h"
#include "fleetreap/remote/nvidia_smi.h"

namespace fleetreap {
namespace {

constexpr char kXid[] = "NVRM: Xid (";

std::vector<std::string> Split(const std::string& text, char separator) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t at = text.find(separator, start);
    parts.push_back(text.substr(start, at - start));
    if (at == std::string::npos) return parts;
    start = at + 1;
  }
}

bool StartsWith(const std::string& text, size_t at, const char* prefix) {
  return text.compare(at, std::char_traits<char>::length(prefix), prefix) == 0;
}

// Where the message starts after an optional /dev/kmsg header
// ("PRI,SEQ,USEC,FLAGS;"), syslog prefix ("... kernel: ") and dmesg
// timestamp ("[  12.345678] "). Sets "*sequence" for a kmsg header.
size_t MessageStart(const std::string& line, std::optional<uint64_t>* sequence) {
  size_t at = 0;
  size_t semicolon = line.find(';');
  size_t nvrm = line.find("NVRM:");
  if (semicolon != std::string::npos && semicolon < nvrm) {
    std::vector<std::string> head = Split(line.substr(0, semicolon), ',');
    uint64_t seq = 0;
    if (head.size() >= 4 && IsDigits(head[0], 4) && ParseUnsigned(head[1], UINT64_MAX, &seq) &&
        IsDigits(head[2], 20)) {
      *sequence = seq;
      at = semicolon + 1;
    }
  }
  size_t kernel = line.find("kernel: ", at);
  if (kernel != std::string::npos && kernel < nvrm) at = kernel + 8;
  if (at < line.size() && line[at] == '[') {
    size_t close = line.find("] ", at);
    if (close != std::string::npos && close < nvrm) at = close + 2;
  }
  while (at < line.size() && line[at] == ' ') ++at;
  return at;
}

bool IsHex(const std::string& text) {
  if (text.empty() || text.size() > 8) return false;
  for (char c : text) {
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "PCI:0000:3b:00" or "0000:3b:00" into "0000:3b:00"; false otherwise.
bool ReadBusId(const std::string& text, std::string* bus_id) {
  std::string id = text.compare(0, 4, "PCI:") == 0 ? text.substr(4) : text;
  std::vector<std::string> parts = Split(id, ':');
  if (parts.size() != 3) return false;
  for (const std::string& part : parts) {
    if (!IsHex(part)) return false;
  }
  *bus_id = id;
  return true;
}

// Reads the Xid line starting at "at"; false when it breaks the structure.
bool ReadXid(const std::string& line, size_t at, XidEvent* event) {
  size_t open = at + sizeof(kXid) - 1;
  size_t close = line.find("): ", open);
  if (close == std::string::npos || close - open > 32) return false;
  if (!ReadBusId(line.substr(open, close - open), &event->bus_id)) return false;
  size_t code_at = close + 3;
  size_t code_end = code_at;
  while (code_end < line.size() && std::isdigit(static_cast<unsigned char>(line[code_end]))) {
    ++code_end;
  }
  if (!ParseDigits(line.substr(code_at, code_end - code_at), 4, &event->code)) return false;
  if (code_end < line.size() && line[code_end] != ',') return false;
  std::string rest = code_end < line.size() ? Trim(line.substr(code_end + 1)) : "";
  // Escaping widens control bytes ("\x01"), so the cap applies after it.
  std::string escaped = EscapeToolLine(rest.substr(0, kMaxXidMessage));
  bool cut = rest.size() > kMaxXidMessage || escaped.size() > kMaxXidMessage;
  event->message = escaped.substr(0, kMaxXidMessage) + (cut ? "..." : "");
  return true;
}

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

}  // namespace

void ParseXidLog(const std::string& text, XidLog* log) {
  *log = XidLog();
  for (std::string line : SplitLines(text)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    ++log->lines;
    std::optional<uint64_t> sequence;
    size_t at = MessageStart(line, &sequence);
    if (sequence && !log->first_sequence) log->first_sequence = sequence;
    if (!StartsWith(line, at, kXid)) {
      if (StartsWith(line, at, "NVRM: Xid")) ++log->malformed;
      continue;
    }
    XidEvent event;
    if (!ReadXid(line, at, &event)) {
      ++log->malformed;
      continue;
    }
    bool merged = false;
    for (XidEvent& seen : log->events) {
      if (seen.code == event.code && Lower(seen.bus_id) == Lower(event.bus_id)) {
        ++seen.count;
        merged = true;
        break;
      }
    }
    if (merged) continue;
    if (log->events.size() >= kMaxXidEvents) {
      ++log->dropped;
      continue;
    }
    event.count = 1;
    log->events.push_back(std::move(event));
  }
}

}  // namespace fleetreap
