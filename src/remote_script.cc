// The scripts of remote_script.h, built as text; remote_script_output.cc
// parses what they print.
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
                       bool holders, const std::vector<int>& watch) {
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
  s += "echo @@children\n";
  if (!watch.empty()) {
    std::string list;
    for (int pid : watch) list += (list.empty() ? "" : " ") + std::to_string(pid);
    s += "for p in " + list + "; do\n";
    s += "  IFS= read -r st </proc/$p/stat 2>/dev/null || continue\n";
    s += "  n=${st#*(}; echo \"$p 0 0 ${n%)*}\"\n";  // the parent itself
    s += "  for c in $(cat /proc/$p/task/*/children 2>/dev/null); do\n";
    s += "    IFS= read -r st </proc/$c/stat 2>/dev/null || continue\n";
    s += "    n=${st#*(}; n=${n%)*}; st=${st##*) }\n";
    s += "    set -- $st; echo \"$p $c ${20} $n\"\n";
    s += "  done\n";
    s += "done\n";
  }
  s += "echo @@end\n";
  return s;
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
  // This shell's start time: the moment of the signals, in the host's clock
  // ticks since boot, the unit of every process start time.
  s += "IFS= read -r st </proc/$$/stat; st=${st##*) }; set -- $st; echo \"now ${20}\"\n";
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

}  // namespace fleetreap
