#include "fleetreap/remote_script.h"

#include <sstream>

#include "fleetreap/nvidia_smi.h"
#include "fleetreap/proc_scan.h"
#include "fleetreap/transport.h"

namespace fleetreap {

namespace {

// Whole seconds for timeout(1), rounded up, at least one.
std::string Seconds(std::chrono::milliseconds d) {
  long long s = (d.count() + 999) / 1000;
  return std::to_string(s < 1 ? 1 : s);
}

// Fractional seconds for sleep(1): "0.15".
std::string FractionalSeconds(std::chrono::milliseconds d) {
  std::ostringstream out;
  out << d.count() / 1000 << "." << (d.count() % 1000) / 100
      << (d.count() % 100) / 10 << d.count() % 10;
  return out.str();
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(line);
  }
  return lines;
}

bool ParseInt(const std::string& text, int* out) {
  if (text.empty() || text.size() > 10) return false;
  size_t start = text[0] == '-' ? 1 : 0;
  if (start == text.size()) return false;
  for (size_t i = start; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
  }
  *out = std::stoi(text);
  return true;
}

// Splits "verb rest" at the first space.
void Split(const std::string& line, std::string* verb, std::string* rest) {
  size_t space = line.find(' ');
  *verb = line.substr(0, space);
  *rest = space == std::string::npos ? "" : line.substr(space + 1);
}

Status Bad(const std::string& what, const std::string& line) {
  return Status::Error(ErrorKind::kParse, what + ": unexpected line \"" +
                                              line.substr(0, 80) + "\"");
}

Status Truncated(const std::string& what) {
  return Status::Error(ErrorKind::kParse,
                       what + ": output is truncated (no @@end line)");
}

std::string TrimSection(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r')) {
    text.pop_back();
  }
  if (!text.empty()) text += '\n';
  return text;
}

// The start-time check shared by the signal script: "alive PID START" prints
// the state and succeeds only when PID is the process that had START.
constexpr const char kAliveFunction[] =
    "alive() {\n"
    "  want=$2\n"
    "  [ -r /proc/$1/stat ] || return 1\n"
    "  IFS= read -r s </proc/$1/stat 2>/dev/null || return 1\n"
    "  s=${s##*) }\n"
    "  set -- $s\n"
    "  [ \"${20}\" = \"$want\" ] || return 1\n"
    "  [ \"$1\" != X ] || return 1\n"
    "  state=$1\n"
    "}\n";

}  // namespace

std::string ScanScript(const std::vector<std::string>& units,
                       std::chrono::milliseconds nvidia_smi_timeout,
                       bool holders) {
  std::string s;
  s += "echo @@session\n";
  s += "a=$$; p=$$; i=0\n";
  s += "while [ \"$p\" -gt 1 ] 2>/dev/null && [ $i -lt 64 ]; do\n";
  s += "  IFS= read -r st </proc/$p/stat 2>/dev/null || break\n";
  s += "  st=${st##*) }; set -- $st; p=$2; i=$((i+1))\n";
  s += "  [ \"$p\" -gt 1 ] 2>/dev/null && a=\"$a $p\"\n";
  s += "done\n";
  s += "echo \"$a\"\n";
  s += "echo @@units\n";
  if (!units.empty()) {
    s += "if command -v systemctl >/dev/null 2>&1; then\n";
    s += "  systemctl list-units --no-legend --plain --full --state=active --";
    for (const std::string& unit : units) s += " " + ShellQuote(unit);
    s += " 2>/dev/null | while read -r u rest; do printf '%s\\n' \"$u\"; done\n";
    s += "fi\n";
  }
  s += "echo @@nvsmi-err\n";
  s += "{ o=$(timeout -k 1 " + Seconds(nvidia_smi_timeout) + " " +
       GpuQueryCommand() + " 2>&4 </dev/null); r=$?; } 4>&1\n";
  s += "printf '\\n@@nvsmi-out\\n'\n";
  s += "[ -z \"$o\" ] || printf '%s\\n' \"$o\"\n";
  s += "echo \"@@nvsmi-rc $r\"\n";
  s += "echo @@holders\n";
  if (holders) s += "(\n" + HolderScanScript() + "\n)\n";
  s += "echo @@end\n";
  return s;
}

Status ParseScanOutput(const std::string& out, ScanOutput* scan) {
  ScanOutput parsed;
  std::string section;
  bool ended = false;
  bool saw_session = false;
  bool saw_rc = false;
  for (const std::string& line : Lines(out)) {
    if (ended) break;
    if (line.rfind("@@", 0) == 0) {
      if (line.rfind("@@nvsmi-rc ", 0) == 0) {
        if (!ParseInt(line.substr(11), &parsed.nvidia_smi_exit)) {
          return Bad("scan", line);
        }
        saw_rc = true;
        section = "";
        continue;
      }
      section = line.substr(2);
      if (section == "end") ended = true;
      continue;
    }
    if (section == "session") {
      std::istringstream in(line);
      std::string word;
      bool first = true;
      while (in >> word) {
        int pid = 0;
        if (!ParseInt(word, &pid)) return Bad("scan", line);
        if (first) {
          parsed.shell_pid = pid;
          saw_session = true;
        } else {
          parsed.ancestors.push_back(pid);
        }
        first = false;
      }
    } else if (section == "units") {
      if (!line.empty()) parsed.active_units.push_back(line);
    } else if (section == "nvsmi-err") {
      parsed.nvidia_smi_err += line + "\n";
    } else if (section == "nvsmi-out") {
      parsed.nvidia_smi_out += line + "\n";
    } else if (section == "holders") {
      parsed.holder_scan += line + "\n";
    }
  }
  if (!ended) return Truncated("scan");
  if (!saw_session || !saw_rc) {
    return Status::Error(ErrorKind::kParse, "scan: a section is missing");
  }
  parsed.nvidia_smi_err = TrimSection(parsed.nvidia_smi_err);
  parsed.nvidia_smi_out = TrimSection(parsed.nvidia_smi_out);
  *scan = std::move(parsed);
  return Status::Ok();
}

std::string PerGpuQueryScript(const std::vector<int>& indexes,
                              std::chrono::milliseconds timeout) {
  std::string s;
  for (int index : indexes) {
    std::string i = std::to_string(index);
    s += "o=$(timeout -k 1 " + Seconds(timeout) + " " + GpuQueryCommandForGpu(index) +
         " 2>/dev/null </dev/null); r=$?\n";
    s += "echo \"@@gpu " + i + " $r\"\n";
    s += "[ -z \"$o\" ] || printf '%s\\n' \"$o\"\n";
  }
  s += "echo @@end\n";
  return s;
}

Status ParsePerGpuQueryOutput(const std::string& out,
                              std::vector<PerGpuQuery>* queries) {
  std::vector<PerGpuQuery> parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *queries = std::move(parsed);
      return Status::Ok();
    }
    if (line.rfind("@@gpu ", 0) == 0) {
      std::string index, code;
      Split(line.substr(6), &index, &code);
      PerGpuQuery query;
      if (!ParseInt(index, &query.index) || !ParseInt(code, &query.exit_code)) {
        return Bad("per-GPU query", line);
      }
      parsed.push_back(query);
      continue;
    }
    if (parsed.empty()) return Bad("per-GPU query", line);
    parsed.back().out += line + "\n";
  }
  return Truncated("per-GPU query");
}

std::string StopUnitsScript(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout) {
  std::string s;
  for (size_t i = 0; i < units.size(); ++i) {
    s += "u=" + ShellQuote(units[i]) + "\n";
    s += "timeout -k 2 " + Seconds(timeout) +
         " systemctl stop -- \"$u\" </dev/null >/dev/null 2>&1\n";
    s += "echo \"stop $? " + std::to_string(i) + "\"\n";
  }
  s += "echo @@end\n";
  return s;
}

Status ParseStopUnitsOutput(const std::string& out,
                            const std::vector<std::string>& units,
                            std::vector<UnitStop>* stops) {
  std::vector<UnitStop> parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *stops = std::move(parsed);
      return Status::Ok();
    }
    std::string verb, rest, code, index_text;
    Split(line, &verb, &rest);
    Split(rest, &code, &index_text);
    UnitStop stop;
    int index = -1;
    if (verb != "stop" || !ParseInt(code, &stop.exit_code) ||
        !ParseInt(index_text, &index) || index < 0 ||
        index >= static_cast<int>(units.size())) {
      return Bad("stop units", line);
    }
    stop.unit = units[index];
    parsed.push_back(stop);
  }
  return Truncated("stop units");
}

std::string SignalScript(const std::string& signal,
                         const std::vector<Target>& targets,
                         std::chrono::milliseconds wait,
                         std::chrono::milliseconds poll) {
  const std::string sig = signal == "KILL" ? "KILL" : "TERM";
  long long rounds = poll.count() > 0 ? (wait.count() + poll.count() - 1) /
                                            poll.count()
                                      : 0;
  std::string list;
  for (const Target& t : targets) {
    if (!list.empty()) list += " ";
    list += std::to_string(t.pid) + ":" + std::to_string(t.start_time);
  }
  std::string s = kAliveFunction;
  s += "targets='" + list + "'\n";
  s += "for t in $targets; do\n";
  s += "  pid=${t%%:*}; start=${t#*:}\n";
  s += "  if alive \"$pid\" \"$start\"; then\n";
  s += "    if kill -s " + sig + " \"$pid\" 2>/dev/null; then echo \"sent $pid\"; "
       "else echo \"failed $pid\"; fi\n";
  s += "  else echo \"gone $pid\"; fi\n";
  s += "done\n";
  s += "i=0\n";
  s += "while :; do\n";
  s += "  left=\n";
  s += "  for t in $targets; do\n";
  s += "    alive \"${t%%:*}\" \"${t#*:}\" && left=\"$left ${t%%:*}:$state\"\n";
  s += "  done\n";
  s += "  [ -n \"$left\" ] && [ $i -lt " + std::to_string(rounds) +
       " ] || break\n";
  s += "  sleep " + FractionalSeconds(poll) + "; i=$((i+1))\n";
  s += "done\n";
  s += "for t in $left; do echo \"left ${t%%:*} ${t#*:}\"; done\n";
  s += "echo @@end\n";
  return s;
}

Status ParseSignalOutput(const std::string& out, SignalOutput* result) {
  SignalOutput parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *result = std::move(parsed);
      return Status::Ok();
    }
    std::string verb, rest, pid_text, state;
    Split(line, &verb, &rest);
    Split(rest, &pid_text, &state);
    int pid = 0;
    if (!ParseInt(pid_text, &pid)) return Bad("signal", line);
    if (verb == "sent") {
      parsed.sent.push_back(pid);
    } else if (verb == "gone") {
      parsed.gone.push_back(pid);
    } else if (verb == "failed") {
      parsed.failed.push_back(pid);
    } else if (verb == "left" && state.size() == 1) {
      parsed.left.emplace_back(pid, state[0]);
    } else {
      return Bad("signal", line);
    }
  }
  return Truncated("signal");
}

std::string ShmCleanScript(const std::vector<std::string>& patterns,
                           bool dry_run) {
  std::string s;
  s += "(\n";
  s += "cd /dev/shm 2>/dev/null || exit 0\n";
  s += "nl='\n'\n";
  s += "used=$( { ls -l /proc/[0-9]*/fd/ 2>/dev/null; "
       "cat /proc/[0-9]*/maps 2>/dev/null; } | grep -F ' /dev/shm/')$nl\n";
  s += "for n in *; do\n";
  s += "  [ -f \"$n\" ] && [ ! -L \"$n\" ] || continue\n";
  s += "  m=\n";
  for (const std::string& pattern : patterns) {
    s += "  p=" + ShellQuote(pattern) + "\n";
    s += "  case $n in $p) m=1 ;; esac\n";
  }
  s += "  [ -n \"$m\" ] || continue\n";
  s += "  case $used in\n";
  s += "    *\" /dev/shm/$n$nl\"*|*\" /dev/shm/$n (deleted)$nl\"*) "
       "printf 'inuse %s\\n' \"$n\"; continue ;;\n";
  s += "  esac\n";
  if (dry_run) {
    s += "  printf 'would %s\\n' \"$n\"\n";
  } else {
    s += "  if rm -f -- \"$n\" 2>/dev/null && [ ! -e \"$n\" ]; then "
         "printf 'removed %s\\n' \"$n\"; else printf 'failed %s\\n' \"$n\"; fi\n";
  }
  s += "done\n";
  s += ")\n";
  s += "echo @@end\n";
  return s;
}

Status ParseShmOutput(const std::string& out, ShmOutput* result) {
  ShmOutput parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *result = std::move(parsed);
      return Status::Ok();
    }
    std::string verb, name;
    Split(line, &verb, &name);
    if (name.empty()) return Bad("shm", line);
    if (verb == "removed" || verb == "would") {
      parsed.removed.push_back(name);
    } else if (verb == "inuse") {
      parsed.in_use.push_back(name);
    } else if (verb == "failed") {
      parsed.failed.push_back(name);
    } else {
      return Bad("shm", line);
    }
  }
  return Truncated("shm");
}

std::string GpuResetScript(const std::vector<int>& gpus) {
  std::string s;
  for (int gpu : gpus) {
    std::string index = std::to_string(gpu);
    s += "o=$(nvidia-smi --gpu-reset -i " + index + " 2>&1 </dev/null)\n";
    s += "r=$?\n";
    s += "echo \"reset " + index + " $r\"\n";
    s += "printf '%s\\n' \"$o\" | sed 's/^/| /'\n";
  }
  s += "echo @@end\n";
  return s;
}

Status ParseGpuResetOutput(const std::string& out,
                           std::vector<GpuReset>* resets) {
  std::vector<GpuReset> parsed;
  for (const std::string& line : Lines(out)) {
    if (line == "@@end") {
      *resets = std::move(parsed);
      return Status::Ok();
    }
    if (line.rfind("| ", 0) == 0 || line == "|") {
      if (parsed.empty()) return Bad("gpu reset", line);
      std::string text = line.size() > 2 ? line.substr(2) : "";
      if (text.empty()) continue;
      std::string& message = parsed.back().message;
      if (!message.empty()) message += "; ";
      message += text;
      continue;
    }
    std::string verb, rest, gpu, code;
    Split(line, &verb, &rest);
    Split(rest, &gpu, &code);
    GpuReset reset;
    if (verb != "reset" || !ParseInt(gpu, &reset.gpu) ||
        !ParseInt(code, &reset.exit_code)) {
      return Bad("gpu reset", line);
    }
    parsed.push_back(reset);
  }
  return Truncated("gpu reset");
}

}  // namespace fleetreap
