#include "fleetreap/proc_scan.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "fleetreap/transport.h"

namespace fleetreap {
namespace {

// The snippet. D is the device directory; every string a process controls
// leaves through hx (od -tx1), so records stay one line of safe tokens.
constexpr char kScript[] = R"SH(
LC_ALL=C; export LC_ALL
hx() { od -An -v -tx1 | tr -d ' \n'; }
hs() { v=$(printf '%s' "$1" | hx); printf '%s' "${v:--}"; }
set --
for f in "$D"/nvidia[0-9]* "$D"/nvidiactl "$D"/nvidia-uvm* "$D"/nvidia-modeset "$D"/nvidia-caps/*; do
  [ -e "$f" ] && set -- "$@" "$f"
done
m=proc
[ "$USE_FUSER" = 1 ] && command -v fuser >/dev/null 2>&1 && m=fuser
echo "fleetreap-holders 1 $m"
for f in "$@"; do echo "dev $(hs "$f")"; done
h=
if [ $# -gt 0 ] && [ $m = fuser ]; then
  for f in "$@"; do
    for p in $(fuser "$f" 2>/dev/null); do
      case $p in ''|*[!0-9]*) continue;; esac
      h="${h:+$h
}hold $p $(hs "$f")"
    done
  done
elif [ $# -gt 0 ]; then
  h=$(ls -lb /proc/[0-9]*/fd/ 2>/dev/null | while IFS= read -r l; do
    case $l in
      /proc/*/fd/:) p=${l#/proc/}; p=${p%/fd/:};;
      l*" -> $D/nvidia"*)
        t=${l#* -> }
        case $t in *[\ \\]*) ;; *) echo "hold $p $(hs "$t")";; esac;;
    esac
  done)
fi
[ -n "$h" ] && printf '%s\n' "$h"
pids=$(printf '%s\n' "$h" | cut -s -d' ' -f2)
for p in $(printf '%s\n' $pids | sort -un); do
  s=$(od -An -v -tx1 "/proc/$p/stat" 2>/dev/null | tr -d ' \n')
  if [ -z "$s" ]; then echo "gone $p"; continue; fi
  u=-
  while read -r k r e x; do
    if [ "$k" = Uid: ]; then u=$e; break; fi
  done 2>/dev/null < "/proc/$p/status"
  n=$(id -nu "$u" 2>/dev/null)
  c=$(od -An -v -tx1 -N 4096 "/proc/$p/cmdline" 2>/dev/null | tr -d ' \n')
  echo "proc $p $s $u $(hs "$n") $(hs "$(readlink "/proc/$p/exe" 2>/dev/null)") ${c:--}"
done
for g in "$G"/*; do
  [ -r "$g/information" ] || continue
  while IFS=: read -r k v; do
    if [ "$k" = "Device Minor" ]; then echo "minor ${g##*/} $v"; break; fi
  done 2>/dev/null < "$g/information"
done
echo end
)SH";

Status LineError(int line, const std::string& what) {
  return Status::Error(ErrorKind::kParse,
                       "holder scan line " + std::to_string(line) + ": " + what);
}

bool ParseNumber(const std::string& text, uint64_t max, uint64_t* value) {
  if (text.empty() || text.size() > 20) return false;
  uint64_t number = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    uint64_t digit = static_cast<uint64_t>(c - '0');
    if (number > (max - digit) / 10) return false;
    number = number * 10 + digit;
  }
  *value = number;
  return true;
}

bool ParsePid(const std::string& text, int* pid) {
  uint64_t value = 0;
  if (!ParseNumber(text, 0x3fffffff, &value) || value == 0) return false;
  *pid = static_cast<int>(value);
  return true;
}

// "-" is the empty string; otherwise pairs of lower-case hex digits.
bool DecodeHex(const std::string& hex, std::string* text) {
  text->clear();
  if (hex == "-") return true;
  if (hex.empty() || hex.size() % 2 != 0) return false;
  auto nibble = [](char c) {
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
  };
  for (size_t i = 0; i < hex.size(); i += 2) {
    int high = nibble(hex[i]), low = nibble(hex[i + 1]);
    if (high < 0 || low < 0) return false;
    text->push_back(static_cast<char>(high * 16 + low));
  }
  return true;
}

// Control characters become "replacement"; NULs in a cmdline separate words.
std::string Neutralise(const std::string& text, char replacement) {
  std::string clean = text;
  for (char& c : clean) {
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = replacement;
  }
  return clean;
}

std::string CleanCmdline(const std::string& raw) {
  std::string cmdline = Neutralise(raw, ' ');
  cmdline.erase(cmdline.find_last_not_of(' ') + 1);
  return cmdline;
}

}  // namespace

std::string HolderScanScript(const HolderScanOptions& options) {
  return "D=" + ShellQuote(options.dev_dir) + "; G=" + ShellQuote(options.driver_dir) +
         "; USE_FUSER=" +
         (options.allow_fuser ? "1" : "0") + kScript;
}

Status ParseProcStat(const std::string& stat, Holder* holder) {
  size_t open = stat.find(" (");
  size_t close = stat.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close < open) {
    return Status::Error(ErrorKind::kParse, "proc stat: missing \"(comm)\"");
  }
  std::vector<std::string> fields;
  std::stringstream rest(stat.substr(close + 1));
  std::string field;
  while (rest >> field) fields.push_back(field);
  if (fields.size() < 20) {
    return Status::Error(ErrorKind::kParse, "proc stat: expected at least 20 fields after "
                                            "comm, got " + std::to_string(fields.size()));
  }
  int pid = 0, ppid = 0;
  uint64_t start_time = 0, ppid_value = 0;
  if (!ParsePid(stat.substr(0, open), &pid)) {
    return Status::Error(ErrorKind::kParse, "proc stat: bad pid");
  }
  if (fields[0].size() != 1) return Status::Error(ErrorKind::kParse, "proc stat: bad state");
  if (!ParseNumber(fields[1], 0x3fffffff, &ppid_value)) {
    return Status::Error(ErrorKind::kParse, "proc stat: bad ppid");
  }
  ppid = static_cast<int>(ppid_value);
  if (!ParseNumber(fields[19], UINT64_MAX, &start_time)) {  // field 22
    return Status::Error(ErrorKind::kParse, "proc stat: bad start time");
  }
  holder->pid = pid;
  holder->comm = Neutralise(stat.substr(open + 2, close - open - 2), '?');
  holder->state = fields[0][0];
  holder->ppid = ppid;
  holder->start_time = start_time;
  return Status::Ok();
}

int GpuIndexOfDevice(const std::string& path) {
  size_t slash = path.rfind('/');
  std::string base = slash == std::string::npos ? path : path.substr(slash + 1);
  if (base.size() <= 6 || base.size() > 10 || base.compare(0, 6, "nvidia") != 0) return -1;
  uint64_t index = 0;
  if (!ParseNumber(base.substr(6), 9999, &index)) return -1;
  return static_cast<int>(index);
}

Status ParseHolderScan(const std::string& out, std::vector<Holder>* holders,
                       HolderScanInfo* info) {
  holders->clear();
  HolderScanInfo scan;
  std::map<int, Holder> described;
  std::map<int, std::set<std::string>> held;  // pid -> device paths
  std::set<int> gone;
  bool ended = false;
  std::stringstream in(out);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (ended) return LineError(number, "text after the end line");
    std::vector<std::string> words;
    std::stringstream split(line);
    for (std::string word; split >> word;) words.push_back(word);
    if (words.empty()) continue;  // blanks only (found by fuzz_holder_scan)
    const std::string& kind = words[0];
    if (number == 1) {
      if (words.size() != 3 || kind != "fleetreap-holders" || words[1] != "1" ||
          (words[2] != "fuser" && words[2] != "proc")) {
        return LineError(number, "expected \"fleetreap-holders 1 fuser|proc\"");
      }
      scan.method = words[2];
      continue;
    }
    int pid = 0;
    if (kind == "end" && words.size() == 1) {
      ended = true;
    } else if (kind == "dev" && words.size() == 2) {
      std::string path;
      if (!DecodeHex(words[1], &path) || path.empty()) return LineError(number, "bad hex in path");
      scan.devices.push_back(path);
    } else if (kind == "hold" && words.size() == 3) {
      std::string path;
      if (!ParsePid(words[1], &pid)) return LineError(number, "bad pid");
      if (!DecodeHex(words[2], &path) || path.empty()) return LineError(number, "bad hex in path");
      held[pid].insert(path);
    } else if (kind == "minor" && words.size() == 3) {
      uint64_t minor = 0;
      if (words[1].find_first_not_of("0123456789abcdefABCDEF:.") != std::string::npos) {
        return LineError(number, "bad bus id");
      }
      if (!ParseNumber(words[2], 9999, &minor)) return LineError(number, "bad device minor");
      scan.minors[words[1]] = static_cast<int>(minor);
    } else if (kind == "gone" && words.size() == 2) {
      if (!ParsePid(words[1], &pid)) return LineError(number, "bad pid");
      gone.insert(pid);
    } else if (kind == "proc" && words.size() == 7) {
      Holder holder;
      std::string stat, user, exe, cmdline;
      if (!ParsePid(words[1], &pid)) return LineError(number, "bad pid");
      if (!DecodeHex(words[2], &stat)) return LineError(number, "bad hex in stat");
      if (!DecodeHex(words[4], &user)) return LineError(number, "bad hex in user");
      if (!DecodeHex(words[5], &exe)) return LineError(number, "bad hex in exe");
      if (!DecodeHex(words[6], &cmdline)) return LineError(number, "bad hex in cmdline");
      uint64_t uid = 0;
      if (words[3] != "-" && !ParseNumber(words[3], UINT32_MAX, &uid)) {
        return LineError(number, "bad uid");
      }
      Status parsed = ParseProcStat(stat, &holder);
      if (!parsed.ok()) return LineError(number, parsed.message());
      if (holder.pid != pid) return LineError(number, "stat is for pid " + std::to_string(holder.pid));
      holder.user = !user.empty() ? Neutralise(user, '?') : words[3] == "-" ? "" : words[3];
      holder.exe = Neutralise(exe, '?');
      holder.cmdline = CleanCmdline(cmdline);
      described[pid] = std::move(holder);
    } else {
      bool known = kind == "end" || kind == "dev" || kind == "hold" || kind == "gone" ||
                   kind == "proc" || kind == "minor";
      return LineError(number, std::string(known ? "malformed" : "unknown") + " record \"" +
                                   Neutralise(kind.substr(0, 20), '?') + "\"");
    }
  }
  if (!ended) return Status::Error(ErrorKind::kParse, "holder scan: output is truncated (no end line)");
  std::vector<Holder> found;
  for (const auto& [pid, paths] : held) {
    auto holder = described.find(pid);
    if (holder == described.end()) {
      if (gone.count(pid) != 0) continue;
      return Status::Error(ErrorKind::kParse, "holder scan: pid " + std::to_string(pid) +
                                                  " holds a device but has no proc record");
    }
    Holder h = holder->second;
    h.devices.assign(paths.begin(), paths.end());
    for (const std::string& path : h.devices) {
      int index = GpuIndexOfDevice(path);
      if (index >= 0) h.gpus.push_back(index);
    }
    std::sort(h.gpus.begin(), h.gpus.end());
    found.push_back(std::move(h));
  }
  scan.gone.assign(gone.begin(), gone.end());
  *holders = std::move(found);
  if (info != nullptr) *info = std::move(scan);
  return Status::Ok();
}

}  // namespace fleetreap
