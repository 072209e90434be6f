// The scripts of remote_script.h, built as text around one shell prelude;
// remote_script_output.cc parses what they print.
#include "fleetreap/remote_script.h"

#include "fleetreap/nvidia_smi.h"
#include "fleetreap/transport.h"

namespace fleetreap {

namespace {

// Whole seconds for timeout(1), rounded up, at least one.
std::string Seconds(std::chrono::milliseconds d) {
  long long s = (d.count() + 999) / 1000;
  return std::to_string(s < 1 ? 1 : s);
}

// Fractional seconds for tail -s: "0.15".
std::string FractionalSeconds(std::chrono::milliseconds d) {
  long long ms = d.count() < 10 ? 10 : d.count();
  std::string frac = std::to_string(1000 + ms % 1000).substr(1);
  return std::to_string(ms / 1000) + "." + frac;
}

// The functions every script shares. z prints a record of the script's own
// words; pst reads /proc/PID/stat by the kernel's rule (S: start time, Z:
// state); nvm lists the NVIDIA character majors; fds is the one fd pass;
// dump describes processes; q runs nvidia-smi bounded by $T.
constexpr char kPrelude[] = R"SH(LC_ALL=C; export LC_ALL; unset QUOTING_STYLE POSIXLY_CORRECT
NL='
'
IFS=" 	$NL"
z() { printf '%s\0' "$*"; }
add() { case " $HP " in *" $1 "*) ;; *) HP="$HP $1";; esac; }
pst() {
  s=; l=
  { while IFS= read -r l; do s="$s$l"; done; } 2>/dev/null </proc/$1/stat || return 1
  s="$s$l"; s=${s##*[)]}
  set -- $s
  [ $# -ge 20 ] || return 1
  Z=$1; S=${20}
}
nvm() {
  MJ=195; MN=; c=
  { while read -r a b; do
    case $a in Character) c=1; continue;; Block) c=; continue;; esac
    [ -n "$c" ] || continue
    case $a in ''|*[!0-9]*) continue;; esac
    case $b in nvidia*) ;; *) continue;; esac
    case $b in *[!a-z0-9-]*) continue;; esac
    MN="$MN $a $b"; [ "$a" = 195 ] || MJ="$MJ $a"
  done; } 2>/dev/null </proc/devices
}
fds() {
  HP=
  x=$(find "$@" -mindepth 1 -maxdepth 1 \( -lname "$DV/nvidia*" ! -lname '*[!-a-zA-Z0-9/_.]*' -printf 'p %p %l\n' \) , -exec stat -L --printf 'c %n %f %t %T %d %i\n' {} + 2>/dev/null)
  set -f; IFS=$NL
  for l in $x; do
    IFS=' '; set -- $l
    p=${2#/proc/}; f=${p##*/}; p=${p%%/*}
    case $p$f in *[!0-9]*) continue;; esac
    if [ "$1" = c ] && [ $# -eq 7 ]; then
      [ -n "$SD" ] && [ "$6" = "$SD" ] && case " $CI " in *" $7 "*) UI="$UI $7";; esac
      case $3 in 2???) ;; *) continue;; esac
      a=$((0x$4)); case " $MJ " in *" $a "*) ;; *) continue;; esac
      [ -n "$Q" ] || z "fd $p $f $a $((0x$5))"
      add $p
    elif [ "$1" = p ] && [ $# -eq 3 ]; then
      [ -n "$Q" ] || printf 'fdp %s %s:%s\0' "$p" "$f" "$3"
      add $p
    fi
  done
  IFS=" 	$NL"; set +f
}
dump() {
  set -f; f=; e=
  for p in $1; do f="$f /proc/$p/stat /proc/$p/status /proc/$p/cmdline"; e="$e /proc/$p/exe"; done
  if [ -n "$f" ]; then
    grep -a -z -H '' $f /etc/passwd 2>/dev/null
    find $e -maxdepth 0 -printf 'exe %h:%l\0' 2>/dev/null
  fi
  set +f
}
q() { o=$(timeout -k 1 $T nvidia-smi "$@" 2>&1 </dev/null); r=$?; }
)SH";

std::string Prelude(const HostPaths& paths) {
  return std::string(kPrelude) + "DV=" + ShellQuote(paths.dev_dir) + "\nSD=; CI=; UI=; Q=\n";
}

// The GPU query without gpu_recovery_action, for drivers that refuse it.
std::string GpuQueryWithoutRecovery() {
  std::string command = GpuQueryCommand();
  const std::string field = ",gpu_recovery_action";
  size_t at = command.find(field);
  if (at != std::string::npos) command.erase(at, field.size());
  return command;
}

// The command's arguments after "nvidia-smi ".
std::string Arguments(const std::string& command) {
  return command.substr(command.find(' ') + 1);
}

std::string AppsArguments() {
  std::string fields;
  for (const std::string& field : ScanAppsFields()) fields += (fields.empty() ? "" : ",") + field;
  return "--query-compute-apps=" + fields + " --format=csv,nounits";
}

}  // namespace

const std::vector<std::string>& ScanAppsFields() {
  static const std::vector<std::string> fields = {"pid", "gpu_uuid", "gpu_bus_id",
                                                  "used_gpu_memory"};
  return fields;
}

std::string ScanScript(const ScanRequest& request, const HostPaths& paths) {
  std::string s = Prelude(paths);
  s += "T=" + Seconds(request.nvidia_smi_timeout) + "\n";
  s += "z 'scan 1'\n";
  // The session: this shell and its ancestors, by the PPid line of status.
  s += "a=; p=$$; i=0\n";
  s += "while [ \"$p\" -gt 1 ] 2>/dev/null && [ $i -lt 64 ]; do\n";
  s += "  n=; { while read -r k v; do [ \"$k\" = PPid: ] && n=$v && break; done; } "
       "2>/dev/null </proc/$p/status\n";
  s += "  case $n in ''|*[!0-9]*) break;; esac\n";
  s += "  p=$n; i=$((i+1)); [ \"$p\" -gt 1 ] && a=\"$a $p\"\n";
  s += "done\n";
  s += "z \"session $$$a\"\n";
  if (request.units.empty()) {
    s += "z 'units -'\n";
  } else {
    s += "if command -v systemctl >/dev/null 2>&1; then\n";
    s += "  u=$(systemctl list-units --no-legend --no-pager --plain --full --state=active --";
    for (const std::string& unit : request.units) s += " " + ShellQuote(unit);
    s += " 2>/dev/null </dev/null); r=$?\n";
    s += "else u=; r=127; fi\n";
    s += "printf 'units %s:%s\\0' \"$r\" \"$u\"\n";
  }
  s += "q " + Arguments(GpuQueryCommand()) + "\n";
  s += "case $o in *gpu_recovery_action*'not a valid field'*) q " +
       Arguments(GpuQueryWithoutRecovery()) + ";; esac\n";
  s += "printf 'gpu %s:%s\\0' \"$r\" \"$o\"; G=$r\n";
  if (!request.holders) {
    s += "z 'apps -'\n";
    s += "z 'table -'\n";
    s += "z end\n";
    return s;
  }
  s += "D=\n";
  // A hung nvidia-smi is not asked again.
  s += "if [ $G = 124 ] || [ $G = 137 ]; then z 'apps -'; else\n";
  s += "  q " + AppsArguments() + "\n";
  s += "  printf 'apps %s:%s\\0' \"$r\" \"$o\"\n";
  s += "  set -f; IFS=$NL\n";
  s += "  for l in $o; do p=${l%%,*}; case $p in ''|*[!0-9]*) ;; *) D=\"$D $p\";; esac; done\n";
  s += "  IFS=\" \t$NL\"; set +f\n";
  s += "fi\n";
  if (request.table) {
    // The PIDs of the Processes box: the word before a type (C, G, C+G).
    s += "if [ $G = 124 ] || [ $G = 137 ]; then z 'table -'; else\n";
    s += "  q; printf 'table %s:%s\\0' \"$r\" \"$o\"\n";
    s += "  set -f; IFS=$NL\n";
    s += "  for l in $o; do IFS=' '; w=; for y in $l; do case $y in C|G|C+G|M|M+C) "
         "case $w in ''|*[!0-9]*) ;; *) D=\"$D $w\";; esac;; esac; w=$y; done; done\n";
    s += "  IFS=\" \t$NL\"; set +f\n";
    s += "fi\n";
  } else {
    s += "z 'table -'\n";
  }
  s += "nvm; z \"majors$MN\"\n";
  s += "fds /proc/[0-9]*/fd\n";
  s += "for g in " + ShellQuote(paths.driver_dir) + "/*; do\n";
  s += "  [ -r \"$g/information\" ] || continue\n";
  s += "  { while IFS=: read -r k v; do\n";
  s += "    [ \"$k\" = 'Device Minor' ] || continue\n";
  s += "    set -- $v; case $1 in ''|*[!0-9]*) ;; *) printf 'minor %s:%s\\0' \"$1\" \"${g##*/}\";; esac\n";
  s += "    break\n";
  s += "  done; } 2>/dev/null <\"$g/information\"\n";
  s += "done\n";
  s += "D=\"$D$HP\"\n";
  if (!request.watch.empty()) {
    std::string list;
    for (int pid : request.watch) list += " " + std::to_string(pid);
    s += "for p in" + list + "; do\n";
    s += "  [ -d /proc/$p ] || continue\n";
    s += "  c=\n";
    s += "  for f in /proc/$p/task/*/children; do y=; read -r y <\"$f\" 2>/dev/null; c=\"$c $y\"; done\n";
    s += "  k=\"kids $p\"; for y in $c; do k=\"$k $y\"; done; z \"$k\"; D=\"$D $p $c\"\n";
    s += "done\n";
  }
  // Each PID once, in the order first seen.
  s += "HP=; for p in $D; do add $p; done\n";
  s += "dump \"$HP\"\n";
  s += "z end\n";
  return s;
}

std::string PerGpuQueryScript(const std::vector<int>& indexes,
                              std::chrono::milliseconds timeout) {
  std::string s = Prelude(HostPaths());
  s += "T=" + Seconds(timeout) + "\n";
  for (int index : indexes) {
    s += "q " + Arguments(GpuQueryCommandForGpu(index)) + "\n";
    s += "printf 'pgpu " + std::to_string(index) + " %s:%s\\0' \"$r\" \"$o\"\n";
  }
  s += "z end\n";
  return s;
}

std::string StopUnitsScript(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout, bool end) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n";
  for (size_t i = 0; i < units.size(); ++i) {
    s += "timeout -k 2 " + Seconds(timeout) + " systemctl stop -- " + ShellQuote(units[i]) +
         " </dev/null >/dev/null 2>&1\n";
    s += "z \"stop " + std::to_string(i) + " $?\"\n";
  }
  if (end) s += "z end\n";
  return s;
}

std::string SignalScript(const std::string& signal, const std::vector<Target>& targets,
                         std::chrono::milliseconds wait, std::chrono::milliseconds poll,
                         const HostPaths& paths, const std::vector<int>& parents) {
  const std::string sig = signal == "KILL" ? "KILL" : "TERM";
  std::string list, dirs;
  for (const Target& t : targets) {
    list += " " + std::to_string(t.pid) + ":" + std::to_string(t.start_time) + ":" +
            (t.needs_fd ? "f" : "m");
    dirs += " /proc/" + std::to_string(t.pid) + "/fd";
  }
  std::string s = Prelude(paths);
  s += "z 'signal 1'\n";
  s += "nvm; Q=1\n";
  s += "HP=\n";
  if (!dirs.empty()) s += "fds" + dirs + "\n";
  s += "pst $$; z \"now $S\"\n";
  s += "cs() { read -r u v </proc/uptime; C=$(( ${u%.*} * 100 + 1${u#*.} - 100 )); }\n";
  s += "cs; B=$C\n";
  s += "TG='" + list + "'\n";
  s += "W=\n";
  s += "for t in $TG; do\n";
  s += "  p=${t%%:*}; r=${t#*:}; w=${r%%:*}; m=${r#*:}\n";
  s += "  if pst $p && [ \"$S\" = \"$w\" ] && { [ $m = m ] || "
       "case \" $HP \" in *\" $p \"*) true;; *) false;; esac; }; then\n";
  s += "    if kill -s " + sig + " $p 2>/dev/null; then z \"sent $p\"; W=\"$W $t\"; "
       "else z \"failed $p\"; fi\n";
  s += "  else z \"gone $p\"; fi\n";
  s += "done\n";
  // Waits with tail --pid (repeatable since coreutils 9; an older tail
  // returns when the last PID is gone, and the loop asks again).
  s += "alive() { A=; for t in $W; do p=${t%%:*}; r=${t#*:}; "
       "pst $p && [ \"$S\" = \"${r%%:*}\" ] && A=\"$A $p:$Z\"; done; }\n";
  s += "if [ -n \"$W\" ]; then\n";
  s += "  cs; E=$((C + " + std::to_string(wait.count() / 10) + "))\n";
  s += "  while :; do\n";
  s += "    alive; [ -n \"$A\" ] || break\n";
  s += "    cs; [ $C -lt $E ] || break\n";
  s += "    k=$((E - C)); c=$((k % 100)); [ $c -lt 10 ] && c=0$c\n";
  s += "    a=; for t in $A; do a=\"$a --pid=${t%%:*}\"; done\n";
  s += "    timeout $((k / 100)).$c tail -s " + FractionalSeconds(poll) +
       " -f $a /dev/null >/dev/null 2>&1\n";
  s += "    case $? in 0|124) ;; *) sleep " + FractionalSeconds(poll) + ";; esac\n";
  s += "  done\n";
  s += "fi\n";
  s += "alive; for t in $A; do z \"left ${t%%:*} ${t#*:}\"; done\n";
  if (!parents.empty()) {
    std::string list;
    for (int pid : parents) list += " " + std::to_string(pid);
    s += "for p in" + list + "; do [ -d /proc/$p ] && z \"parent $p\"; done\n";
  }
  s += "cs; z \"done $((C - B))\"\n";
  s += "z end\n";
  return s;
}

std::string ShmCleanScript(const std::vector<std::string>& patterns, bool dry_run,
                           const HostPaths& paths) {
  std::string s = Prelude(paths);
  s += "z 'shm 1'\n";
  std::string names;
  for (const std::string& pattern : patterns) {
    names += std::string(names.empty() ? "" : " -o") + " -name " + ShellQuote(pattern);
  }
  if (names.empty()) names = " -false";
  std::string match = "find \"$M\" -mindepth 1 -maxdepth 1 -xdev -type f \\(" + names + " \\)";
  // The candidates' inodes, then which of them any process has open (the fd
  // pass) or mapped (maps lines on /dev/shm's device with that inode).
  s += "M=" + ShellQuote(paths.shm_dir) + "\n";
  // No candidate (the usual case): nothing more to read or start.
  s += "set -f; CI=$(" + match + " -printf '%i ' 2>/dev/null); set +f\n";
  s += "if [ -n \"$CI\" ]; then\n";
  s += "SD=$(find \"$M\" -maxdepth 0 -printf '%D' 2>/dev/null)\n";
  s += "case $SD in ''|*[!0-9]*) SD=;; esac\n";
  s += "if [ -n \"$SD\" ]; then\n";
  s += "  mj=$(( ((SD >> 8) & 0xfff) | ((SD >> 32) & ~0xfff) )); "
       "mn=$(( (SD & 0xff) | ((SD >> 12) & ~0xff) ))\n";
  s += "  hx() { h=; n=$1; while [ $n -gt 0 ] || [ -z \"$h\" ]; do d=$((n % 16)); "
       "case $d in 10) d=a;; 11) d=b;; 12) d=c;; 13) d=d;; 14) d=e;; 15) d=f;; esac; "
       "h=$d$h; n=$((n / 16)); done; [ ${#h} -ge 2 ] || h=0$h; }\n";
  s += "  hx $mj; SX=$h; hx $mn; SX=$SX:$h\n";
  s += "  nvm; Q=1; fds /proc/[0-9]*/fd\n";
  s += "  set -- $CI; IFS='|'; e=\"$*\"; IFS=\" \t$NL\"\n";
  s += "  y=$(find /proc/[0-9]*/maps -exec grep -h -E \" $SX ($e) \" {} + 2>/dev/null)\n";
  s += "  set -f; IFS=$NL\n";
  s += "  for l in $y; do IFS=' '; set -- $l; [ \"$4\" = \"$SX\" ] && UI=\"$UI $5\"; done\n";
  s += "  IFS=\" \t$NL\"; set +f\n";
  s += "fi\n";
  s += "i=; for u in $UI; do case \" $CI \" in *\" $u \"*) i=\"$i -o -inum $u\";; esac; done\n";
  // Unknown device: every match counts as in use, nothing is removed.
  s += "i=${i# -o }; [ -n \"$i\" ] || i=-false; [ -n \"$SD\" ] || i=-true\n";
  s += "set -f\n";
  s += match + " \\( \\( $i \\) -printf 'inuse:%f\\0' -o ";
  s += dry_run ? "-printf 'would:%f\\0'" : "-delete -printf 'removed:%f\\0' -o -printf 'failed:%f\\0'";
  s += " \\) 2>/dev/null\n";
  s += "set +f\n";
  s += "fi\n";
  return s;
}

std::string GpuResetScript(const std::vector<int>& gpus) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n";
  for (int gpu : gpus) {
    std::string index = std::to_string(gpu);
    s += "o=$(nvidia-smi --gpu-reset -i " + index + " 2>&1 </dev/null); r=$?\n";
    s += "printf 'reset " + index + " %s:%s\\0' \"$r\" \"$o\"\n";
  }
  s += "z end\n";
  return s;
}

}  // namespace fleetreap
