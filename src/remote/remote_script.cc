// The reading scripts of remote_script.h (scan, per-GPU query, stop units),
// built as text around one shell prelude that remote_script_actions.cc
// shares; remote_script_output.cc parses what they print.
#include "fleetreap/remote/remote_script.h"

#include "fleetreap/base/shell.h"
#include "fleetreap/base/text.h"
#include "fleetreap/base/time_format.h"
#include "fleetreap/model/daemon_pid_file.h"
#include "fleetreap/remote/nvidia_smi.h"
#include "remote_script_prelude.h"

namespace fleetreap {
namespace remote_script_internal {

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
# shellcheck disable=SC2034,SC2086  # sets Z and S for the caller; splits stat's fields
pst() {
  s=; l=
  { while IFS= read -r l; do s="$s$l"; done; } 2>/dev/null </proc/"$1"/stat || return 1
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
# lv PID [START]: the PID is there (with that start time) and not a zombie
# whose every thread has exited; a Z leader with live threads is alive.
# shellcheck disable=SC2048,SC2086  # the glob counts the tasks
lv() {
  pst "$1" || return 1
  [ -z "$2" ] || [ "$S" = "$2" ] || return 1
  case $Z in Z|X) set -- /proc/"$1"/task/[0-9]*; [ $# -gt 1 ];; esac
}
# fds TASKDIR...: the fds of every thread (/proc/PID/task/TID/fd), each PID's
# entries once; K holds what this PID already printed.
# shellcheck disable=SC2086  # splits find's lines into words, under set -f
fds() {
  HP=; LP=; K=
  if [ -n "$SD" ]; then t=f; else t=c; fi
  x=$(find "$@" -mindepth 2 -maxdepth 3 \( -path '*/task/*/fd/*' \( -lname "$DV/nvidia*" ! -lname '*[!-a-zA-Z0-9/_.]*' -printf 'p %p %l\n' \) , \( \( -xtype c -o -xtype $t \) -exec stat -L --printf 'c %n %f %t %T %d %i\n' {} + \) \) -o \( ! -name fd -prune \) 2>/dev/null)
  set -f; IFS=$NL
  for l in $x; do
    IFS=' '; set -- $l
    p=${2#/proc/}; f=${p##*/}; p=${p%%/*}
    case $p$f in *[!0-9]*) continue;; esac
    [ "$p" = "$LP" ] || { LP=$p; K=; }
    if [ "$1" = c ] && [ $# -eq 7 ]; then
      [ -n "$SD" ] && [ "$6" = "$SD" ] && case " $CI " in *" $7 "*) UI="$UI $7";; esac
      case $3 in 2???) ;; *) continue;; esac
      a=$((0x$4)); case " $MJ " in *" $a "*) ;; *) continue;; esac
      k=$f:$a:$((0x$5)); case " $K " in *" $k "*) continue;; esac; K="$K $k"
      [ -n "$Q" ] || z "fd $p $f $a $((0x$5))"
      add "$p"
    elif [ "$1" = p ] && [ $# -eq 3 ]; then
      k=$f:$3; case " $K " in *" $k "*) continue;; esac; K="$K $k"
      [ -n "$Q" ] || printf 'fdp %s %s:%s\0' "$p" "$f" "$3"
      add "$p"
    fi
  done
  IFS=" 	$NL"; set +f
}
# mps MAPS...: the mappings of NVIDIA device files (/proc/PID/maps lines
# whose file is named nvidia*), each PID's files once. A plain file under
# $DV counts by path (mmp); any other file counts by the device number of
# the file behind the mapping (map_files, else the path in the process's
# root), stat'ed in one call (mm).
# shellcheck disable=SC2086  # splits grep's lines, under set -f
mps() {
  x=$(grep -H -E ' /([^ ]*/)?nvidia[^/ ]*( \(deleted\))?$' "$@" 2>/dev/null)
  set -f; IFS=$NL; LP=; K=; y=
  for l in $x; do
    p=${l#/proc/}; p=${p%%/*}
    case $p in ''|*[!0-9]*) continue;; esac
    r=${l#*/maps:}; r=${r%% *}
    n=${l% (deleted)}; n=/${n##* /}
    [ "$p" = "$LP" ] || { LP=$p; K=; }
    case " $K " in *" $n "*) continue;; esac; K="$K $n"
    case $n in "$DV"/nvidia*) case $n in *[!-a-zA-Z0-9/_.]*) ;; *)
      [ -n "$Q" ] || printf 'mmp %s:%s\0' "$p" "$n"
      add "$p"; continue;; esac;; esac
    case $r in *[!0-9a-f-]*|'') continue;; esac
    y="$y$NL/proc/$p/map_files/$r"
    case $l in *' (deleted)') ;; *) y="$y$NL/proc/$p/root$n";; esac
  done
  if [ -n "$y" ]; then
    x=$(stat -L --printf 'm %n %f %t %T\n' $y 2>/dev/null); LP=; K=
    for l in $x; do
      IFS=' '; set -- $l
      p=${2#/proc/}; p=${p%%/*}
      case $p in ''|*[!0-9]*) continue;; esac
      [ $# -eq 5 ] || continue
      case $3 in 2???) ;; *) continue;; esac
      a=$((0x$4)); case " $MJ " in *" $a "*) ;; *) continue;; esac
      [ "$p" = "$LP" ] || { LP=$p; K=; }
      k=$a:$((0x$5)); case " $K " in *" $k "*) continue;; esac; K="$K $k"
      [ -n "$Q" ] || z "mm $p $a $((0x$5))"
      add "$p"
    done
  fi
  IFS=" 	$NL"; set +f
}
# shellcheck disable=SC2086  # $f and $e are lists of /proc paths, under set -f
dump() {
  set -f; f=; e=
  for p in $1; do f="$f /proc/$p/stat /proc/$p/status /proc/$p/cmdline /proc/$p/cgroup"; e="$e /proc/$p/exe"; done
  if [ -n "$f" ]; then
    grep -a -z -H '' $f /etc/passwd 2>/dev/null
    find $e -maxdepth 0 -printf 'exe %h:%l\0' 2>/dev/null
    find -L $e -maxdepth 0 -printf 'exs %h %U %m\0' 2>/dev/null
  fi
  set +f
}
# shellcheck disable=SC2034  # sets o and r for the caller
q() { o=$(timeout -k 1 "$T" nvidia-smi "$@" 2>&1 </dev/null); r=$?; }
)SH";

std::string Prelude(const HostPaths& paths) {
  return std::string(kPrelude) + "DV=" + ShellQuote(paths.dev_dir) + "\nSD=; CI=; UI=; Q=\n";
}

}  // namespace remote_script_internal

namespace {

using remote_script_internal::Prelude;

// The command's arguments after "nvidia-smi ".
std::string Arguments(const std::string& command) { return command.substr(command.find(' ') + 1); }

std::string AppsArguments() {
  return "--query-compute-apps=" + Join(ScanAppsFields(), ",") + " --format=csv,nounits";
}

}  // namespace

const std::vector<std::string>& ScanAppsFields() {
  static const std::vector<std::string> fields = {"pid", "gpu_uuid", "gpu_bus_id",
                                                  "used_gpu_memory"};
  return fields;
}

// The scan's body. Its inputs are set before it: the playbook's units as
// the positional parameters, T (nvidia-smi's bound in seconds), GQ and GQ6
// (the GPU query's arguments, with and without gpu_recovery_action), AQ
// (compute apps), HOLD (the holder part), TABLE (the plain table too),
// WATCH (parents whose children to list) and DR (the driver's GPU folder).
constexpr char kScanBody[] = R"SH(z 'scan 1'
# The session: this shell and its ancestors, by the PPid line of status.
a=; p=$$; i=0
while [ "$p" -gt 1 ] 2>/dev/null && [ $i -lt 64 ]; do
  n=; { while read -r k v; do [ "$k" = PPid: ] && n=$v && break; done; } 2>/dev/null </proc/"$p"/status
  case $n in ''|*[!0-9]*) break;; esac
  p=$n; i=$((i+1)); [ "$p" -gt 1 ] && a="$a $p"
done
z "session $$$a"
if [ $# -eq 0 ]; then
  z 'units -'
else
  if command -v systemctl >/dev/null 2>&1; then
    u=$(systemctl list-units --no-legend --no-pager --plain --full --state=active -- "$@" 2>/dev/null </dev/null); r=$?
  else
    u=; r=127
  fi
  printf 'units %s:%s\0' "$r" "$u"
  set -f; IFS=$NL
  # shellcheck disable=SC2086  # the first word of each line
  for l in $u; do IFS=' '; set -- $l; case $1 in *[!A-Za-z0-9:_.@-]*) ;; ?*) UN="$UN $1";; esac; IFS=$NL; done
  IFS=" 	$NL"; set +f
fi
# shellcheck disable=SC2086  # GQ, GQ6 and AQ are nvidia-smi's arguments, one word each
q $GQ
# shellcheck disable=SC2086
case $o in *gpu_recovery_action*'not a valid field'*) q $GQ6;; esac
printf 'gpu %s:%s\0' "$r" "$o"; G=$r
if [ -z "$HOLD" ]; then
  z 'apps -'; z 'table -'
else
  D=
  # A hung nvidia-smi is not asked again; the PIDs it charges are holders.
  if [ $G = 124 ] || [ $G = 137 ]; then
    z 'apps -'
  else
    # shellcheck disable=SC2086
    q $AQ; printf 'apps %s:%s\0' "$r" "$o"
    set -f; IFS=$NL
    for l in $o; do p=${l%%,*}; case $p in ''|*[!0-9]*) ;; *) D="$D $p";; esac; done
    IFS=" 	$NL"; set +f
  fi
  # The plain table's Processes box: the PID is the word before a type.
  if [ -z "$TABLE" ] || [ $G = 124 ] || [ $G = 137 ]; then
    z 'table -'
  else
    q; printf 'table %s:%s\0' "$r" "$o"
    set -f; IFS=$NL
    for l in $o; do
      IFS=' '; w=
      for y in $l; do
        case $y in C|G|C+G|M|M+C) case $w in ''|*[!0-9]*) ;; *) D="$D $w";; esac;; esac
        w=$y
      done
    done
    IFS=" 	$NL"; set +f
  fi
  nvm; z "majors$MN"
  fds /proc/[0-9]*/task
  mps /proc/[0-9]*/maps
  for g in "$DR"/*; do
    [ -r "$g/information" ] || continue
    { while IFS=: read -r k v; do
      [ "$k" = 'Device Minor' ] || continue
      # shellcheck disable=SC2086  # the minor's digits without the blanks
      set -- $v; case $1 in ''|*[!0-9]*) ;; *) printf 'minor %s:%s\0' "$1" "${g##*/}";; esac
      break
    done; } 2>/dev/null <"$g/information"
  done
  D="$D$HP"
  for p in $WATCH; do
    [ -d "/proc/$p" ] || continue
    c=
    for f in "/proc/$p"/task/*/children; do y=; read -r y <"$f" 2>/dev/null; c="$c $y"; done
    k="kids $p"; for y in $c; do k="$k $y"; done; z "$k"; D="$D $p $c"
  done
  # Each PID once, in the order first seen.
  HP=; for p in $D; do add "$p"; done
  dump "$HP"
  # The PID namespace this shell sees, and which of the daemons' PID files
  # (and the namespace marker) are root's and writable by no one else.
  set -f
  # shellcheck disable=SC2086  # PF is a list of paths, under set -f
  y=$(find /proc/$$/ns/pid $PF /etc/fleetreap/host-pid-namespace -maxdepth 0 \( -type l -printf 'L %l\n' \) -o \( -user 0 ! -perm /022 -printf 'O %p\n' \) 2>/dev/null)
  IFS=$NL; ok=
  for l in $y; do
    case $l in 'L pid:['*']') printf 'pidns:%s\0' "${l#L }";; 'O '*) ok="$ok ${l#O }";; esac
  done
  IFS=" 	$NL"
  i=0
  for f in $PF; do
    d=${f%/*}
    case " $ok " in *" $d "*) case " $ok " in *" $f "*) v=; read -r v <"$f" 2>/dev/null; printf 'pidf %s:%s\0' $i "$v";; esac;; esac
    i=$((i+1))
  done
  case " $ok " in *" /etc/fleetreap/host-pid-namespace "*) v=; read -r v </etc/fleetreap/host-pid-namespace 2>/dev/null; printf 'pidmark:%s\0' "$v";; esac
  # This shell's cgroup, and the units that own the holders (from their
  # cgroups) and the playbook's units: their Restart= and cgroup.
  c=; while IFS= read -r l; do c="$c$l$NL"; done </proc/$$/cgroup 2>/dev/null
  printf 'selfcg:%s\0' "$c"
  U=
  for p in $HP; do
    while read -r l; do
      case $l in 0::/*|*:name=systemd:/*) ;; *) continue;; esac
      IFS=/; for w in ${l#*:/}; do case $w in *[!A-Za-z0-9:_.@-]*) ;; ?*.service) case " $U " in *" $w "*) ;; *) U="$U $w";; esac;; esac; done; IFS=" 	$NL"
    done <"/proc/$p/cgroup" 2>/dev/null
  done
  set +f
  if [ -n "$U$UN" ] && command -v systemctl >/dev/null 2>&1; then
    # shellcheck disable=SC2086  # U and UN are lists of unit names, each checked
    u=$(systemctl show -p Id,Restart,ControlGroup,MainPID -- $U $UN 2>/dev/null </dev/null); printf 'show %s:%s\0' $? "$u"
  else
    z 'show -'
  fi
fi
z end
)SH";

std::string ScanScript(const ScanRequest& request, const HostPaths& paths) {
  std::string watch;
  for (int pid : request.watch) watch += (watch.empty() ? "" : " ") + std::to_string(pid);
  std::string s = Prelude(paths);
  s += "UN=\nset --";
  for (const std::string& unit : request.units) s += " " + ShellQuote(unit);
  s += "\nT=" + TimeoutSeconds(request.nvidia_smi_timeout) + "\n";
  s += "GQ=" + ShellQuote(Arguments(GpuQueryCommand())) + "\n";
  s += "GQ6=" + ShellQuote(Arguments(GpuQueryCommandWithoutRecovery())) + "\n";
  s += "AQ=" + ShellQuote(AppsArguments()) + "\n";
  s += std::string("HOLD=") + (request.holders ? "1" : "") + "\n";
  s += std::string("TABLE=") + (request.table ? "1" : "") + "\n";
  s += "WATCH='" + watch + "'\n";
  s += "DR=" + ShellQuote(paths.driver_dir) + "\n";
  std::string pid_files;
  for (const DaemonPidFile& file : DaemonPidFiles()) pid_files += " " + file.path;
  s += "PF='" + pid_files + "'\n";
  return s + kScanBody;
}

std::string PerGpuQueryScript(const std::vector<int>& indexes, std::chrono::milliseconds timeout) {
  std::string s = Prelude(HostPaths());
  s += "T=" + TimeoutSeconds(timeout) + "\n";
  for (int index : indexes) {
    s += "q " + Arguments(GpuQueryCommandForGpu(index)) + "\n";
    s += "printf 'pgpu " + std::to_string(index) + " %s:%s\\0' \"$r\" \"$o\"\n";
  }
  s += "z end\n";
  return s;
}

std::string StopUnitsScript(const std::vector<std::string>& units,
                            std::chrono::milliseconds timeout) {
  return remote_script_internal::StopUnitsRecords(units, timeout) + "z end\n";
}

std::string remote_script_internal::StopUnitsRecords(const std::vector<std::string>& units,
                                                     std::chrono::milliseconds timeout) {
  std::string s = "z() { printf '%s\\0' \"$*\"; }\n";
  for (size_t i = 0; i < units.size(); ++i) {
    s += "timeout -k 2 " + TimeoutSeconds(timeout) + " systemctl stop -- " + ShellQuote(units[i]) +
         " </dev/null >/dev/null 2>&1\n";
    s += "z \"stop " + std::to_string(i) + " $?\"\n";
  }
  return s;
}

// The signal step's body. Inputs: SIG (TERM or KILL), TG (targets as
// "PID:START:f|m", m for one only nvidia-smi charges), DIRS (their fd
// folders), WAITCS (the wait, centiseconds), POLL (tail's interval), PP (the
// targets' parents).
}  // namespace fleetreap
